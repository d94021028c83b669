import { availableParallelism } from 'node:os';
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
    // A TMPDIR of the suite's own, checked at the end for processes and directories left behind.
    globalSetup: ['test/helpers/suite-leftovers.ts'],
    // In every worker: temp directories removed when a file ends, exit hooks run when vitest ends the worker.
    setupFiles: ['test/helpers/worker-setup.ts'],
    // At least two files at once, even on two cores: most of the suite waits on child processes
    // (services, bubblewrap, git, tmux, Chromium) rather than computing, and one worker left the
    // second core idle for most of a 31-minute run.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Once more after a failure. Both flakes it was added for are understood and fixed: slirp4netns
    // racing bubblewrap's loopback set-up, and the CLI tests' service allowed all of /tmp, whose
    // census rewrote other test files' repositories. Kept one more round, so that a flake not yet
    // seen shows as a retried test in the report rather than as a red run; a test failing twice is red.
    retry: 1,
  },
});
