// Types of eslint.config.js for test/architecture.test.ts.
import type { Linter } from 'eslint';

export const layers: Linter.Config[];
declare const config: Linter.Config[];
export default config;
