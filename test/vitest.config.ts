import { tributaryVitestConfig } from './vitest.shared.js';

export default tributaryVitestConfig();
