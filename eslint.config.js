// ESLint over the TypeScript sources, with type information: a small rule set for what the
// compiler does not check (`npm run lint` runs it after tsc and before the layer check).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.conformance/**', '.bench/**', '**/fixtures/**'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits loses its rejection: await it, return it, or mark it `void`.
      // node:test's test(), it() and describe() hand back promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }] },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    // In the sources a control character in a pattern is meant only where a directive says so;
    // tests and scripts match terminal escapes on purpose.
    files: ['src/**/*.ts', 'src/**/*.tsx'],
    rules: { 'no-control-regex': 'error' },
  },
);
