import { describe, expect, it } from 'vitest';
import { errorBodyExcerpt, ModelError, toModelError } from '../../src/model/errors.js';

const context = { provider: 'openai' as const, baseUrl: 'http://gpu:8000/v1', model: 'qwen' };

describe('errorBodyExcerpt', () => {
  it.each([
    ['Ollama', '{"error":"model requires more system memory"}'],
    ['OpenAI', '{"error":{"message":"model requires more system memory","type":"server_error"}}'],
    ['vLLM', '{"object":"error","message":"model requires more system memory","code":500}'],
    ['a plain text body', '  model requires more system memory\n'],
  ])('quotes the runtime message from %s', (_shape, body) => {
    expect(errorBodyExcerpt(body)).toBe('model requires more system memory');
  });

  it('cuts a long body', () => {
    const excerpt = errorBodyExcerpt(`<html>${'x'.repeat(5000)}</html>`);
    expect(excerpt).toHaveLength(303);
    expect(excerpt.endsWith('...')).toBe(true);
  });
});

describe('toModelError', () => {
  it('quotes an error object a runtime reported inside its stream', () => {
    const error = toModelError({ message: 'CUDA error', type: 'server_error' }, context);
    expect(error).toMatchObject({ kind: 'interrupted', retryable: false });
    expect(error.message).toBe('Model runtime at http://gpu:8000/v1 reported an error mid-answer: CUDA error');
  });

  it('treats a dropped socket as a retryable disconnection', () => {
    const socket = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    const error = toModelError(new TypeError('terminated', { cause: socket }), context);
    expect(error).toMatchObject({ kind: 'disconnected', retryable: true });
    expect(error.message).toBe('Connection to the model runtime at http://gpu:8000/v1 failed: terminated: other side closed');
  });

  it('does not mistake a bug for a connection problem', () => {
    const error = toModelError(new RangeError('bad index'), context);
    expect(error).toMatchObject({ kind: 'invalid-response', retryable: false });
  });

  it('keeps a ModelError as it is', () => {
    const original = new ModelError('timeout', 'slow');
    expect(toModelError(original, context)).toBe(original);
  });
});
