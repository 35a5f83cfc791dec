/**
 * Admin dependencies for tests that mount the real admin plugin (bearer check, error shape,
 * OpenAPI validation) with only the parts their routes use: every other dependency throws
 * when touched, so a test that reaches one fails loudly instead of passing on a stub.
 */
import type { AdminDeps } from './routes.js';

export const TEST_ADMIN_TOKEN = 'tok-0123456789abcdef';

/** A dependency no request of the test reaches: any property read throws. */
export function unreached<T extends object>(): T {
  return new Proxy({} as T, {
    get: (_target, property) => {
      throw new Error(`an admin dependency this test does not provide was used (.${String(property)})`);
    },
  });
}

/** `AdminDeps` with `overrides`, the rest unreached, ready and with TEST_ADMIN_TOKEN. */
export function testAdminDeps(overrides: Partial<AdminDeps> = {}): AdminDeps {
  return {
    token: TEST_ADMIN_TOKEN,
    config: unreached(),
    events: unreached(),
    deadLetters: unreached(),
    health: unreached(),
    quarantine: unreached(),
    isReady: () => true,
    ...overrides,
  };
}
