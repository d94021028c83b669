import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LiveText } from '../../src/ui/live-text.js';
import { Terminal } from '../../src/ui/terminal.js';

/** A plain terminal (a pipe) whose output the test reads back. */
function piped(): { terminal: Terminal; output: () => string } {
  const stdout = new PassThrough();
  let written = '';
  stdout.on('data', (chunk: Buffer) => (written += chunk.toString()));
  const terminal = new Terminal({ stdout, stderr: new PassThrough(), env: {} });
  return { terminal, output: () => written };
}

describe('LiveText on a plain terminal', () => {
  it('writes each piece as it comes, trimmed at the edges as the whole answer was', () => {
    const { terminal, output } = piped();
    const live = new LiveText(terminal);
    live.write('\n  First');
    expect(output()).toBe('First');
    live.write(' words \n\n');
    // Whitespace waits for text after it: the end of an answer is not known yet.
    expect(output()).toBe('First words');
    live.write('then more.\n');
    expect(output()).toBe('First words \n\nthen more.');
    live.finish();
    expect(output()).toBe('First words \n\nthen more.\n');
    expect(live.shown).toBe(true);
  });

  it('ends a segment on its own line before a tool line, and starts the next one trimmed', () => {
    const { terminal, output } = piped();
    const live = new LiveText(terminal);
    live.write('Looking. ');
    live.close();
    terminal.print('→ read_file notes.txt');
    live.write('  Found it.');
    live.finish();
    expect(output()).toBe('Looking.\n→ read_file notes.txt\nFound it.\n');
  });

  it('writes nothing for an answer of whitespace, and shows escape sequences as text', () => {
    const { terminal, output } = piped();
    const live = new LiveText(terminal);
    live.write('  \n ');
    live.finish();
    expect([output(), live.shown]).toEqual(['', false]);
    live.write('red \u001b[31mtext');
    live.finish();
    expect(output()).not.toContain('\u001b');
    expect(output()).toMatch(/^red .*text\n$/);
  });
});
