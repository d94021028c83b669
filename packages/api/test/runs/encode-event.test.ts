import { describe, expect, it } from 'vitest';
import { encodeEvent } from '../../src/runs/encode-event.js';

describe('encodeEvent', () => {
  it('leaves out null fields at any depth, and keeps everything else as JSON.stringify writes it', () => {
    expect(encodeEvent({ event: 'chunk', data: 'a "quoted" token\n' })).toBe(JSON.stringify({ event: 'chunk', data: 'a "quoted" token\n' }));
    expect(encodeEvent({ event: 'tool_start', tool_name: 'read_file', tool_args: { path: 'a.ts', limit: null, nested: { x: null, y: 1 } }, error_message: null })).toBe(
      '{"event":"tool_start","tool_name":"read_file","tool_args":{"path":"a.ts","nested":{"y":1}}}',
    );
    // In an array a left-out value is written null, with or without the replacer.
    expect(encodeEvent({ event: 'x', list: [1, null, 'b'], when: new Date(0), gone: undefined })).toBe('{"event":"x","list":[1,null,"b"],"when":"1970-01-01T00:00:00.000Z"}');
  });
});
