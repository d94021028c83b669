import type { SearchBackend } from './search/backend.js';
import { javascriptBackend } from './search/javascript.js';
import { createRipgrepBackend } from './search/ripgrep.js';
import { findExecutable } from './search/select.js';
import { safeSearchPath } from './sandbox/exec/environment.js';
import { toolSandbox } from './sandbox/tool-sandbox.js';
import type { ToolContext } from './tool.js';

export interface SearchSession {
  backend: SearchBackend;
  dispose(): void;
}

/**
 * The search backend for one call of glob_files or grep_content: ripgrep inside the sandbox
 * (allowed paths read-only, no network, DATA_DIR and `.env` masked). With the sandbox enabled but
 * unavailable no process is started at all: the JavaScript backend searches in-process. Only the
 * operator's SANDBOX_ENABLED=false runs rg unconfined.
 */
export async function searchSession(context: ToolContext, root: string): Promise<SearchSession> {
  const searchPath = safeSearchPath(process.env.PATH, context.sandbox.roots);
  const sandbox = await toolSandbox(context, 'read', searchPath, root);
  const { launcher } = sandbox;
  if (sandbox.availability.state === 'disabled') return { backend: context.host.searchBackend.get(), dispose: () => {} };
  const rg = findExecutable('rg', searchPath);
  if (launcher === undefined || rg === undefined) return { backend: javascriptBackend, dispose: () => launcher?.dispose() };
  return {
    backend: createRipgrepBackend(rg, (binary, args, cwd) => launcher.launch(binary, args, cwd)),
    dispose: () => launcher.dispose(),
  };
}
