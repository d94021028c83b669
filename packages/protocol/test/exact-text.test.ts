import { describe, expect, it } from 'vitest';
import { describeCall, exactText } from '../src/exact-text.js';

const ESC = '\u001b';

describe('exactText: what the user approves', () => {
  it('shows an escape sequence instead of obeying it, so the real command stays on screen', () => {
    const command = `rm -rf ~ #\r${ESC}[2K${ESC}[1Als -la`;
    expect(exactText(command)).toBe('rm -rf ~ #␍␛[2K␛[1Als -la');
  });

  it('shows backspaces that would rub out the real command', () => {
    expect(exactText('rm -rf ~\b\b\b\b\b\b\b\bls')).toBe('rm -rf ~␈␈␈␈␈␈␈␈ls');
  });

  it('names bidi overrides and isolates (Trojan Source)', () => {
    expect(exactText('cat notes\u202Etxt.hs')).toBe('cat notes<U+202E>txt.hs');
    expect(exactText('echo \u2066ok\u2069')).toBe('echo <U+2066>ok<U+2069>');
    expect(exactText('x\u200Fy\u061Cz')).toBe('x<U+200F>y<U+061C>z');
  });

  it('makes two commands that look alike differ on screen: zero-width and look-alike spaces', () => {
    expect(exactText('rm\u200B -rf')).toBe('rm<U+200B> -rf');
    expect(exactText('git\u00A0push')).toBe('git<U+00A0>push');
    expect(exactText('a\u2060b\uFEFFc\u00ADd')).toBe('a<U+2060>b<U+FEFF>c<U+00AD>d');
    expect(exactText('tag\u{E0041}')).toBe('tag<U+E0041>');
    expect(exactText('sel\uFE0Fector\u3164')).toBe('sel<U+FE0F>ector<U+3164>');
    expect(exactText('rm -rf ~')).not.toBe(exactText('rm -rf\u200B ~'));
  });

  it('names C1 controls, including the 8-bit CSI', () => {
    expect(exactText('\u009b2Jls')).toBe('<U+009B>2Jls');
  });

  it('keeps an ordinary command, with tabs, newlines and non-Latin words, as it is', () => {
    const command = "printf 'Grüße 日本語\\n'\tcat > notes.txt <<'EOF'\nline one\nEOF";
    expect(exactText(command)).toBe(command);
  });
});

describe('describeCall: one line per call, for the terminal and the console alike', () => {
  it('shows a command after its tool, exactly', () => {
    expect(describeCall({ tool: 'bash', args: { command: 'rm -rf build\u202E' } })).toBe('bash: rm -rf build<U+202E>');
  });

  it('shows any other arguments as JSON, exactly', () => {
    expect(describeCall({ tool: 'write_file', args: { path: 'a\u200Bb.txt' } })).toBe('write_file {"path":"a<U+200B>b.txt"}');
  });
});
