import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    // A promise nobody awaits loses its rejection (an unhandled rejection ends the process) and its
    // ordering; one handed where a callback's result is ignored (an event listener, a timer) too.
    // Each deliberate exception says so with `void` and a comment naming where its errors go.
    files: ['packages/**/*.ts', 'packages/**/*.tsx', 'bench/**/*.ts', 'scripts/**/*.ts', 'test/**/*.ts', 'vitest.config.ts'],
    languageOptions: {
      parserOptions: {
        project: ['./packages/*/tsconfig.json', './tsconfig.tests.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    files: ['packages/api/src/**/*.ts'],
    rules: { 'no-console': 'error' },
  },
);
