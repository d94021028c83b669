/**
 * A long answer streamed token by token through the whole service: scripted model over HTTP, the
 * agent loop, the stored run events, the legacy SSE stream, the client. The text scan alone is
 * text-calls.bench.ts; this is what the rest of the path adds per token.
 */
import { startScriptedModel } from '../packages/testkit/src/index.js';
import { createTestApp } from '../packages/api/test/support/app.js';
import { prose, tokensOf } from './answers.js';
import { medianMs, result, type Bench } from './harness.js';

const ANSWER_BYTES = 512 * 1024;

const bench: Bench = async () => {
  const answer = prose(ANSWER_BYTES);
  const tokens = tokensOf(answer);
  const model = await startScriptedModel({ zeroLatency: true });
  const t = await createTestApp({ model: { url: model.url } });
  try {
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    let frames = 0;
    /** One explore run over /agents/stream; fails unless the client got the whole answer. */
    const streamed = async (chunks: string[]): Promise<void> => {
      // The turn itself, not scripted.chunks(...): a spread of 131,072 arguments overflows the stack.
      model.push({ kind: 'text', chunks });
      const response = await fetch(`${base}/agents/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ agent_type: 'explore', prompt: 'Explain the handler', working_dir: t.workdir }),
      });
      const body = await response.text();
      const texts = body
        .split('\n\n')
        .filter((block) => block.startsWith('data: '))
        .map((block) => JSON.parse(block.slice('data: '.length)) as { event: string; data?: string });
      frames = texts.length;
      if (texts.filter((f) => f.event === 'chunk').map((f) => f.data).join('') !== answer) throw new Error('the client did not get the whole answer');
    };
    const whole = await medianMs(() => streamed([answer]), 5, 1);
    const tokenMs = await medianMs(() => streamed(tokens), 3, 1);
    return [
      result(
        'service end to end: 512 KB answer in 4-byte tokens, model to SSE client',
        'the same answer in one chunk',
        whole,
        tokenMs,
        undefined,
        `${frames} SSE frames for ${tokens.length} tokens (fast text is stored as one event per turn of the event loop)`,
      ),
    ];
  } finally {
    await t.close();
    await model.close();
  }
};
export default bench;
