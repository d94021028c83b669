import { describe, expect, it } from 'vitest';
import { assertMessageFits, messageTokens } from '../../src/http/message-limit.js';
import { countTokens } from '../../src/tokens/count.js';

describe('counting a client message against MAX_MESSAGE_TOKENS', () => {
  const long = 'the quick brown fox jumps over the lazy dog\n'.repeat(40_000); // about 1.7 MB

  it('gives about the tokenizer count of the whole text, counted in pieces', async () => {
    const whole = countTokens(long);
    expect(Math.abs((await messageTokens(long)) - whole) / whole).toBeLessThan(0.01);
  });

  it('lets other work run while it counts a long message', async () => {
    let counted = false;
    const counting = messageTokens(long).then((n) => {
      counted = true;
      return n;
    });
    // Work queued once the count has begun: with the count done in one go, it would find it finished.
    const duringCount = await new Promise<boolean>((resolve) => setImmediate(() => resolve(!counted)));
    expect(duringCount).toBe(true);
    expect(await counting).toBeGreaterThan(0);
  });

  it('refuses a message over the limit with its size, and passes one within it uncounted', async () => {
    const tokens = await messageTokens(long);
    await expect(assertMessageFits(long, { tokens: 1000, bytes: 2_000_000 })).rejects.toThrow(`Message too large: ${tokens} tokens (max 1000)`);
    await expect(assertMessageFits('x'.repeat(999), { tokens: 1000, bytes: 2_000_000 })).resolves.toBeUndefined();
  });

  it('refuses a message over the byte limit by its UTF-8 size, before counting its tokens', async () => {
    const bytes = Buffer.byteLength(long);
    await expect(assertMessageFits(long, { tokens: 1_000_000, bytes: 1_000_000 })).rejects.toThrow(`Message too large: ${bytes} bytes (max 1000000)`);
    await expect(assertMessageFits('é'.repeat(500), { tokens: 1000, bytes: 999 })).rejects.toThrow('Message too large: 1000 bytes (max 999)');
    await expect(assertMessageFits('é'.repeat(500), { tokens: 1000, bytes: 1000 })).resolves.toBeUndefined();
  });
});
