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
    // Once more after a failure, for one flake not yet understood: in one whole-suite run, a
    // read-only run of mode-confinement.test.ts found one path of its hostile repository changed
    // (passing alone, and in 4 runs beside the sandbox and checkpoint suites). The test now names
    // the paths that changed. The sandbox flake this was first added for (slirp4netns racing
    // bubblewrap's loopback set-up) is fixed. A test that fails twice is red as before.
    retry: 1,
  },
});
