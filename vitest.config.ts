import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const pkg = (name: string): string => fileURLToPath(new URL(`./packages/${name}/src/index.ts`, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests run the TypeScript sources of sibling packages, never a stale dist/.
    alias: {
      '@mada/protocol': pkg('protocol'),
      '@mada/testkit': pkg('testkit'),
    },
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Once more after a failure: under load (two suites' workers, services and sandboxes on two
    // cores), a sandboxed command now and then has no effect (`rm` exits 1 with the file still
    // there; seen as bubblewrap's `loopback: Failed RTM_NEWADDR` by one helper), in a test that
    // passes alone. Not understood yet (the session note says what was ruled out); a test that
    // fails twice is red as before.
    retry: 1,
  },
});
