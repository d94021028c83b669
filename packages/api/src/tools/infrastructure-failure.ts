import type { ToolContext } from './tool.js';

/**
 * The failure text a tool reports when the service's own infrastructure failed under it (the
 * search engine, the model runtime behind a sub-agent). The model, the `tool_done` event and so
 * the user read it with the internal addresses hidden in keyed mode; the run's log keeps the
 * whole error, so an operator still sees where the call went.
 */
export function infrastructureFailure(text: string, error: unknown, context: Pick<ToolContext, 'hideAddresses' | 'log'>): string {
  const shown = context.hideAddresses?.(text) ?? text;
  if (shown !== text) context.log?.warn({ err: error }, 'a tool failed on the service\'s infrastructure (its address is hidden from the user)');
  return shown;
}
