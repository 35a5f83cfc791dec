import { tributaryVitestConfig } from '../../test/vitest.shared.js';

export default tributaryVitestConfig();
