/**
 * Work over many items that must not hold the event loop: `handle` runs for `perTurn` items at
 * once, and the rest wait for the next turn (`setImmediate`: after the I/O callbacks already
 * pending — fetched records, HTTP answers — have run).
 */
export function inTurns<T>(items: readonly T[], perTurn: number, handle: (item: T) => void, nextTurn: (turn: () => void) => void = setImmediate): void {
  const take = (from: number): void => {
    const end = Math.min(items.length, from + Math.max(1, perTurn));
    for (let index = from; index < end; index++) handle(items[index] as T);
    if (end < items.length) nextTurn(() => take(end));
  };
  take(0);
}
