import { ModelError } from './errors.js';
import { REFRESH_INTERVAL_MS } from './runtime-introspector.js';

interface RuntimeSettings {
  llmProvider: string;
  llmBaseUrl: string;
}

/**
 * The one log line for a runtime that did not answer the service's look at it (at start-up and
 * every 5 minutes), with the fix. A stopped Ollama is the usual first-hour state, not a fault:
 * a stack trace there only buried the hint.
 */
export function runtimeUnreachable(settings: RuntimeSettings, error: unknown): string {
  // Already a sentence with its fix (a redirect names LLM_BASE_URL).
  if (error instanceof ModelError) return error.message;
  const fix = settings.llmProvider === 'ollama' ? 'start it with `ollama serve`' : 'start the OpenAI-compatible server, or point LLM_BASE_URL at it';
  return `Model runtime not reachable at ${settings.llmBaseUrl}: ${fix} (asking again every ${REFRESH_INTERVAL_MS / 60_000} minutes)`;
}
