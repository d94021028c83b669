import { afterAll } from 'vitest';
import { removeProcessDir } from '../../packages/api/src/util/process-dir.js';
import { removeTempDirs } from './temp-dirs.js';

// Registered before the test file's own hooks, so they run after them (hooks after tests run in
// reverse): services the file started are stopped by then. The service's own directory (its
// staged /etc) is removed here rather than at exit: vitest ends a worker with SIGTERM, which
// skips exit hooks, and kills it half a second later, before a busy machine has removed it.
afterAll(() => {
  removeTempDirs();
  removeProcessDir();
});
