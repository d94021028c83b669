import { describe, expect, it } from 'vitest';
import { StreamGate } from '../../src/model/index.js';

/** Streams `chunks` through a gate: what went out live, and what the end of the answer adds. */
function run(chunks: readonly string[]): { live: string; rest: string } {
  const gate = new StreamGate();
  const live = chunks.map((chunk) => gate.push(chunk)).join('');
  return { live, rest: gate.finish() };
}

describe('StreamGate', () => {
  it('lets prose through as it arrives, keeping back only what may start a marker', () => {
    const gate = new StreamGate();
    expect(gate.push('Hello ')).toBe('Hello ');
    expect(gate.push('world <tool')).toBe('world ');
    expect(gate.push('s> and more')).toBe('<tools> and more');
  });

  it('keeps back a newline or backtick ending a token only until the next token tells what it starts', () => {
    const gate = new StreamGate();
    expect(gate.push('Done.')).toBe('Done.');
    expect(gate.push(' See\n')).toBe(' See');
    expect(gate.push('- a')).toBe('\n- a');
    expect(gate.push(' `x`')).toBe(' `x');
    expect(gate.push(' `')).toBe('` ');
    expect(gate.push('`')).toBe('');
    expect(gate.push(' y')).toBe('`` y');
    expect(gate.push('\n')).toBe('');
    expect(gate.push('{"name": "read_file"}')).toBe('');
    expect(gate.finish()).toBe('\n{"name": "read_file"}');
  });

  it('holds everything from where a call may begin until the answer ends', () => {
    for (const marker of ['```json\n{}', '<tool_call>', '<function=x>', '<|python_tag|>', '[TOOL_CALLS]', '<\uFF5Ctool\u2581calls\u2581begin\uFF5C>', '\n{"a": 1}']) {
      const { live, rest } = run(['Before.', marker.slice(0, 3), marker.slice(3), ' after']);
      expect(live).toBe('Before.');
      expect(live + rest).toBe(`Before.${marker} after`);
    }
  });

  it('holds an answer that opens with a JSON value', () => {
    expect(run(['  ', '{"name"', ': 1}'])).toEqual({ live: '', rest: '  {"name": 1}' });
  });

  it('drops reasoning, cut anywhere, and the whitespace after it', () => {
    const text = '<think>plan: call read_file</think>\n\nThe answer.';
    for (let cut = 1; cut < text.length; cut++) {
      const { live, rest } = run([text.slice(0, cut), text.slice(cut)]);
      expect(live + rest, `cut at ${cut}`).toBe('The answer.');
    }
  });

  it('drops an unclosed reasoning block entirely', () => {
    expect(run(['Start. <think>never ', 'closed'])).toEqual({ live: 'Start. ', rest: '' });
  });

  it('gives the whole text back, in any split, when nothing is held', () => {
    const text = 'Use `npm test` [docs] <b>bold</b> and a = b.\nNext line.';
    for (let size = 1; size < 9; size++) {
      const chunks = Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
      const { live, rest } = run(chunks);
      expect(live + rest).toBe(text);
    }
  });

  it('decides the same for an answer in one chunk as in tokens of any size, whatever marker it holds', () => {
    // Long prose before the marker: one chunk is searched one marker at a time, small tokens a
    // character at a time, so this compares the two ways of finding a marker.
    const prose = 'The handler in `src/app.ts` reads [the docs] and <b>bold</b> text.\n- a list item\n'.repeat(4);
    const markers = ['```json\n{}', '<tool_call>', '<function=x>', '<|python_tag|>', '[TOOL_CALLS]', '<|start|>assistant', '<|channel|>commentary', '\n{"a": 1}'];
    const endings = [...markers, '<think>aside</think> After.', '<thinking>aside</thinking>', '<|channel|>analysis<|message|>aside<|end|>Done.', '<|tool', '`` not a fence'];
    for (const ending of endings) {
      const text = `${prose}${ending} tail`;
      const whole = run([text]);
      for (const size of [1, 2, 3, 4, 7, 64, 65, 200]) {
        const chunks = Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
        expect(run(chunks), `${JSON.stringify(ending)} in ${size}-character tokens`).toEqual(whole);
      }
      // A call marker holds everything from it on; the text before it went out live.
      if (markers.includes(ending)) expect(whole, JSON.stringify(ending)).toEqual({ live: prose, rest: `${ending} tail` });
    }
  });
});

describe('StreamGate on an answer opening with a long blank run', () => {
  // Each token used to rescan the whole run: 256,000 one-character tokens took minutes.
  it('decides once the run ends, and sends the run with what follows', () => {
    const blanks = Array.from({ length: 256_000 }, () => '\n');
    expect(run([...blanks, 'Text.'])).toEqual({ live: `${'\n'.repeat(256_000)}Text.`, rest: '' });
    expect(run([...blanks, '{"name": "x"}'])).toEqual({ live: '', rest: `${'\n'.repeat(256_000)}{"name": "x"}` });
    expect(run(blanks)).toEqual({ live: '', rest: '\n'.repeat(256_000) });
  });
});
