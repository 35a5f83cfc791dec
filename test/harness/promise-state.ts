/** What a promise has come to so far, read synchronously by tests that step the event loop. */
export type PromiseState = { value: 'pending' | 'committed' | Error };

/** Tracks a promise's outcome: 'pending', then 'committed' once it resolves, or its error. */
export function promiseState(promise: Promise<void>): PromiseState {
  const state: PromiseState = { value: 'pending' };
  promise.then(
    () => (state.value = 'committed'),
    (error: Error) => (state.value = error),
  );
  return state;
}
