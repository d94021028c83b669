import { estimateTokens } from '../conversations/tokens.js';
import type { ChatMessage } from '../model/index.js';

/** Masking starts when the run's messages pass this share of the model's window... */
const MASK_AT = 0.8;
/** ...and the most recent tool results stay readable. */
const KEEP_RECENT_RESULTS = 2;

const placeholder = (tool: string): string => `[Output of ${tool} removed to keep the context window small. Call the tool again if you need it.]`;

const size = (message: ChatMessage): number => estimateTokens(message.content) + 4;

/**
 * Observation masking: when the run nears the model's context window, older tool results are
 * replaced by a short placeholder (oldest first) before anything else is dropped. Returns how many
 * results were masked. The length/4 estimate is deliberate: this runs on every step.
 */
export function maskOldToolResults(messages: ChatMessage[], contextTokens: number): number {
  const limit = contextTokens * MASK_AT;
  let total = messages.reduce((sum, message) => sum + size(message), 0);
  if (total <= limit) return 0;
  const results = messages.flatMap((message, index) => (message.role === 'tool' ? [index] : []));
  let masked = 0;
  for (const index of results.slice(0, Math.max(0, results.length - KEEP_RECENT_RESULTS))) {
    if (total <= limit) break;
    const message = messages[index];
    if (message?.role !== 'tool' || message.content.startsWith('[Output of ')) continue;
    const replacement = { ...message, content: placeholder(message.toolName) };
    total += size(replacement) - size(message);
    messages[index] = replacement;
    masked++;
  }
  return masked;
}
