import { SandboxProbes } from './sandbox/launcher.js';
import { Toolchains } from './sandbox/tool-sandbox.js';
import { SearchBackendChoice } from './search/select.js';

/**
 * What the tools learn of this machine once and then trust: whether the sandbox works here (and
 * its network), where the toolchains it shows live, and which search backend runs unconfined.
 * Built at start-up by the composition root (services.ts), never kept in module scope: each
 * service, and each test, has its own.
 */
export interface ToolHost {
  sandboxes: SandboxProbes;
  toolchains: Toolchains;
  searchBackend: SearchBackendChoice;
}

export const createToolHost = (): ToolHost => ({ sandboxes: new SandboxProbes(), toolchains: new Toolchains(), searchBackend: new SearchBackendChoice() });
