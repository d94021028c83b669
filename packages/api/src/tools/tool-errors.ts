import { PathOutsideError } from './sandbox/paths.js';
import { PatternError } from './search/patterns.js';
import { RipgrepError } from './search/ripgrep.js';
import { fail, type ToolResult } from './tool.js';

/** A refusal or failure whose message the agent reads as it is. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}

const AGENT_FACING = [ToolError, PathOutsideError, PatternError, RipgrepError];

/**
 * The failed result for an expected error. A cancelled run and unexpected errors are rethrown: the
 * agent engine reports those itself (cancellation ends the run, a crash becomes `<tool> failed`).
 */
export function failureFor(error: unknown, signal: AbortSignal): ToolResult {
  if (signal.aborted) throw error;
  if (AGENT_FACING.some((type) => error instanceof type)) return fail((error as Error).message);
  throw error;
}

/** The errno code of a file-system error (`ENOENT`, `EACCES`, ...), if it is one. */
export function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
