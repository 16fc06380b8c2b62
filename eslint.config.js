// ESLint (typescript-eslint, type-aware): promises that are never awaited or handed where a callback's result
// is ignored, type-only imports written as such, and the layer boundaries of the architecture (README, "Adding
// an operation"): handlers → domain → db/queries; src/db never imports src/domain or src/http; the domain reaches
// providers only through their interface (src/providers/provider.ts), never a concrete provider; providers and
// src/net never import the domain.
import tseslint from 'typescript-eslint';

/** One layer: `files` may import nothing matching any rule's patterns (each rule says why). */
const layer = (files, ...rules) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: rules.map(([group, message]) => ({ group, message })) }] },
});

/** The layer rules alone (test/architecture.test.ts proves they refuse a deliberate violation). */
export const layers = [
  layer(
    ['src/handlers/**/*.ts'],
    [['**/db/*', '**/db/**'], 'Handlers call a service in src/domain/<section>/, which reaches SQL through src/db/queries.'],
  ),
  layer(
    ['src/db/**/*.ts'],
    [['**/domain/*', '**/domain/**', '**/http/*', '**/http/**'], 'src/db holds SQL only: no domain types, no ApiError, no HTTP.'],
  ),
  layer(
    ['src/domain/**/*.ts'],
    [['**/http/*', '**/http/**', '**/handlers/*', '**/handlers/**'], 'The domain never depends on the HTTP layer.'],
    [
      ['**/providers/*', '**/providers/**', '!**/providers/provider.ts'],
      'The domain reaches providers through src/providers/provider.ts (AppContext.providers) only; src/runtime.ts picks the concrete ones.',
    ],
  ),
  layer(
    ['src/providers/**/*.ts', 'src/net/**/*.ts'],
    [
      ['**/domain/*', '**/domain/**', '**/http/*', '**/http/**', '**/handlers/*', '**/handlers/**'],
      'Providers and src/net serve the domain and never depend on it: what both need (the SSRF guard …) lives in src/net or src/lib.',
    ],
  ),
];

export default tseslint.config(
  { ignores: ['node_modules/**', 'generated/**', '.data/**', 'test/fixtures/**'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  ...layers,
  {
    // An ES import of node:http as a value reads its lazy WebSocket getters and loads Node's bundled undici at every
    // start (issue 38): the server takes it from src/lib/node-http.ts. Type-only imports are erased and allowed.
    files: ['src/**/*.ts'],
    ignores: ['src/lib/node-http.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: ['node:http', 'http'].map((name) => ({
            name,
            allowTypeImports: true,
            message: 'Use `http` from src/lib/node-http.ts (an ES import of node:http loads undici at start).',
          })),
        },
      ],
    },
  },
);
