/**
 * Waiting on the URLs of one destination: the first success settles the delivery (the spec:
 * "sending to any one succeeds → processed"), so a destination with one healthy and one
 * hanging URL is not held — nor its concurrency slot — for the hanging one's whole timeout.
 * Without a success, every URL's outcome is needed to choose retry or dead letter.
 * Requests still running after a success finish on their own (bounded by WEBHOOK_TIMEOUT).
 */
export async function settleOnFirstSuccess<T>(attempts: Array<Promise<T>>, isSuccess: (result: T) => boolean): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const finished: T[] = [];
    let settled = false;
    for (const attempt of attempts) {
      attempt.then(
        (result) => {
          if (settled) return;
          finished.push(result);
          if (isSuccess(result) || finished.length === attempts.length) {
            settled = true;
            resolve(finished.slice());
          }
        },
        (error: unknown) => {
          if (settled) return;
          settled = true;
          reject(error);
        },
      );
    }
    if (attempts.length === 0) resolve([]);
  });
}
