import type { SearchBackend } from '../../../src/tools/search/backend.js';
import { javascriptBackend } from '../../../src/tools/search/javascript.js';
import { createRipgrepBackend } from '../../../src/tools/search/ripgrep.js';
import { findExecutable } from '../../../src/tools/search/select.js';

/** ripgrep must be installed for the suite: a missing `rg` fails loudly rather than skipping half the tests. */
function ripgrep(): SearchBackend {
  const rg = findExecutable('rg');
  if (!rg) throw new Error('ripgrep (rg) is not on PATH: install it (Debian package "ripgrep") to run the search tests');
  return createRipgrepBackend(rg);
}

export const ripgrepBackend = ripgrep();

/** Both backends, for tests that must hold whichever one the service picks. */
export const bothBackends: readonly SearchBackend[] = [ripgrepBackend, javascriptBackend];
