/**
 * What the service's own body checks (nesting depth, U+0000, lone surrogates) add to a large body
 * of small values, the shape that costs a walk the most per byte. The baseline is the same request
 * to a Fastify route without them, so JSON parsing and routing are on both sides.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { normalizeBodyText } from '../packages/api/src/http/body-text.js';
import { interleavedMediansMs, result, type Bench } from './harness.js';

/** Just under the default MAX_BODY_BYTES of 2 MiB: numbers and small objects, as a hostile client would send. */
function smallValues(): string {
  const extra = Array.from({ length: 260_000 }, (_, i) => (i % 4 === 0 ? { n: 'ab' } : i));
  return JSON.stringify({ agent_type: 'explore', prompt: 'p', extra });
}

async function app(checked: boolean): Promise<FastifyInstance> {
  const instance = Fastify({ bodyLimit: 2_097_152 });
  if (checked) normalizeBodyText(instance);
  instance.post('/', async () => ({ ok: true }));
  await instance.ready();
  return instance;
}

const bench: Bench = async () => {
  const body = smallValues();
  const [plain, checked] = await Promise.all([app(false), app(true)]);
  const post = (instance: FastifyInstance) => () => instance.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/json' }, payload: body });
  try {
    const { baselineMs, subjectMs } = await interleavedMediansMs(post(plain), post(checked), 15, 3);
    return [
      result(
        `body checks on a ${(body.length / 1024 / 1024).toFixed(1)} MiB body of small values`,
        'the same request to a route without them',
        baselineMs,
        subjectMs,
        1.5,
        'the event loop is held for the whole request; three walks that copied a path per value made this about 4',
      ),
    ];
  } finally {
    await Promise.all([plain.close(), checked.close()]);
  }
};

export default bench;
