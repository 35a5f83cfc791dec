/** The error of class `kind` that `run` throws; any other outcome fails the test. */
export function thrown<E extends Error>(run: () => unknown, kind: abstract new (...args: never[]) => E): E {
  try {
    run();
  } catch (error) {
    if (error instanceof kind) return error;
    throw error;
  }
  throw new Error(`expected a ${kind.name}`);
}
