import { describe, expect, it } from 'vitest';
import { mergeTextFrames } from '../../src/runs/text-frames.js';

describe('joining text frames a busy store has not taken yet', () => {
  it('joins response text and legacy chunk data, in order', () => {
    expect(mergeTextFrames({ event: 'response', text: 'Hello ' }, { event: 'response', text: 'world' })).toEqual({ event: 'response', text: 'Hello world' });
    expect(mergeTextFrames({ event: 'chunk', data: 'a' }, { event: 'chunk', data: 'b' })).toEqual({ event: 'chunk', data: 'ab' });
  });

  it('never joins frames of different kinds, other events, or frames that carry more than text', () => {
    expect(mergeTextFrames({ event: 'response', text: 'a' }, { event: 'chunk', data: 'b' })).toBeUndefined();
    expect(mergeTextFrames({ event: 'thinking', message: 'a' }, { event: 'thinking', message: 'b' })).toBeUndefined();
    // The type allows more fields on a frame held in a variable; such a frame is stored as it is.
    const carriesMore = { event: 'response' as const, text: 'a', extra: 1 };
    expect(mergeTextFrames(carriesMore, { event: 'response', text: 'b' })).toBeUndefined();
    expect(mergeTextFrames({ event: 'tool_start', tool: 'x', args: {} }, { event: 'tool_start', tool: 'x', args: {} })).toBeUndefined();
  });
});
