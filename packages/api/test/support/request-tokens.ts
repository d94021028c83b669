import type { RecordedRequest } from '@mada/testkit';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';

/** What a request cost, counted from what the runtime received: contents, calls and tool schemas. */
export function receivedTokens(request: RecordedRequest): number {
  const messages = request.messages.reduce(
    (sum, m) => sum + countTokens(m.content) + (m.toolCalls ? countTokens(JSON.stringify(m.toolCalls)) : 0) + 3,
    3,
  );
  return messages + (request.tools.length > 0 ? countTokens(JSON.stringify(request.tools)) : 0);
}
