/**
 * Runs tasks one at a time, in arrival order. Admin writes decide against the current
 * state and then write (a source in use must not be deleted while a destination naming it
 * is being written), so within a process they must not interleave. Transactions need the
 * same: a kafkajs producer runs one at a time.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    // The next task waits for this one to settle, whether it succeeded or not.
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every task queued so far has settled. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
