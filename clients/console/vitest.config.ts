import { tributaryVitestConfig } from '../../test/vitest.shared.js';

// The console's tests cover its pure modules (formatting, query and tail state, the API
// client's request building); the pages are exercised in a real browser by test/e2e.
export default tributaryVitestConfig();
