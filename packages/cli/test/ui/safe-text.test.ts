import { styleText } from 'node:util';
import { describe, expect, it } from 'vitest';
import { safeJson, safeOutput, safeText } from '../../src/ui/safe-text.js';

const ESC = '\u001b';
const BEL = '\u0007';
const ST = `${ESC}\\`;

/** What a hostile file can make the model echo, each with what a terminal would do with it. */
const HOSTILE: [string, string][] = [
  ['OSC 52 writes the clipboard (BEL)', `${ESC}]52;c;cm0gLXJmIH4=${BEL}`],
  ['OSC 52 writes the clipboard (ST)', `${ESC}]52;c;cm0gLXJmIH4=${ST}`],
  ['OSC 52 asks for the clipboard', `${ESC}]52;c;?${BEL}`],
  ['OSC 8 hyperlink', `${ESC}]8;;https://evil.example/${BEL}docs${ESC}]8;;${BEL}`],
  ['OSC 0 and 2 set the window title', `${ESC}]0;pwned${BEL}${ESC}]2;pwned${ST}`],
  ['OSC 11 asks for the background colour', `${ESC}]11;?${BEL}`],
  ['DCS asks for a setting (DECRQSS)', `${ESC}P$qm${ST}`],
  ['DCS asks for terminfo (XTGETTCAP)', `${ESC}P+q544e${ST}`],
  ['APC', `${ESC}_Gf=100;AAAA${ST}`],
  ['PM', `${ESC}^private${ST}`],
  ['SOS', `${ESC}Xstring${ST}`],
  ['CSI 6n asks for the cursor position', `${ESC}[6n`],
  ['CSI c asks for the device attributes', `${ESC}[c`],
  ['CSI 21t asks for the window title', `${ESC}[21t`],
  ['CSI 2K erases the line', `${ESC}[2K`],
  ['CSI 1A moves the cursor up', `${ESC}[1A`],
  ['CSI 2J clears the screen', `${ESC}[2J`],
  ['CSI ?7l turns line wrapping off', `${ESC}[?7l`],
  ['SGR 8 hides text', `${ESC}[8m`],
  ['SGR with colon parameters', `${ESC}[38:2:0:0:0m`],
  ['ESC c resets the terminal', `${ESC}c`],
  ['ESC 7 saves the cursor', `${ESC}7`],
  ['ESC ( 0 switches to line drawing', `${ESC}(0`],
  ['ESC # 8 fills the screen with E', `${ESC}#8`],
  ['8-bit CSI', '\u009b2J'],
  ['8-bit OSC ended by 8-bit ST', '\u009d52;c;aGk=\u009c'],
  ['8-bit DCS', '\u0090$qm\u009c'],
  ['8-bit APC', '\u009fpayload\u009c'],
];

/** What a terminal would obey in `text`: C0 controls but tab and newline, DEL, C1 controls. */
function obeyed(text: string): string[] {
  return [...text]
    .map((char) => char.codePointAt(0) ?? 0)
    .filter((code) => (code < 0x20 && code !== 0x09 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f))
    .map((code) => `U+${code.toString(16).padStart(4, '0')}`);
}

/** SGR sequences, which the output guard lets through on purpose. */
const STYLING = new RegExp(`${ESC}\\[[0-9;]*m`, 'gu');

describe('safeText: service text for the terminal', () => {
  it.each(HOSTILE)('leaves nothing a terminal obeys of: %s', (_name, sequence) => {
    const shown = safeText(`before ${sequence} after`);
    expect(obeyed(shown)).toEqual([]);
    expect(shown.startsWith('before ')).toBe(true);
    expect(shown.endsWith(' after')).toBe(true);
  });

  it('removes whole sequences rather than leaving their payload on screen', () => {
    expect(safeText(`a${ESC}]52;c;cm0gLXJmIH4=${BEL}b${ESC}[31mc${ESC}[0md${ESC}P+q544e${ST}e`)).toBe('abcde');
  });

  it('shows stray controls as pictures: carriage return, backspace, bell, DEL, a lone ESC', () => {
    expect(safeText('ls\rrm -rf ~')).toBe('ls␍rm -rf ~');
    expect(safeText('safe\b\b\b\bevil')).toBe('safe␈␈␈␈evil');
    expect(safeText(`ding${BEL}`)).toBe('ding␇');
    expect(safeText('x\u007fy')).toBe('x␡y');
    expect(safeText(`end${ESC}`)).toBe('end␛');
  });

  it('names C1 controls that are not sequences', () => {
    expect(safeText('next\u0085line')).toBe('next<U+0085>line');
  });

  it('does not obey a sequence that never ends: its introducer is shown', () => {
    const shown = safeText(`${ESC}]52;c;cm0gLXJmIH4= and the rest of the answer`);
    expect(shown).toBe('␛]52;c;cm0gLXJmIH4= and the rest of the answer');
  });

  it('cannot be tricked into building a sequence out of what it removes', () => {
    const shown = safeText(`${ESC}${ESC}]0;x${BEL}[2J ${ESC}${ESC}7[6n`);
    expect(obeyed(shown)).toEqual([]);
  });

  it('reads CRLF as a line end', () => {
    expect(safeText('one\r\ntwo\r\n')).toBe('one\ntwo\n');
  });

  it('keeps benign text exactly: letters of any script, emoji, CJK, tabs, newlines, right-to-left text', () => {
    const benign = 'Grüße, Ångström, Ελληνικά, русский\n\tindented: 日本語の文章、中文，한국어\nemoji: 👍🏽 👨‍👩‍👧 🇫🇷\nעברית ومرحبا\n`code` **bold** | table |';
    expect(safeText(benign)).toBe(benign);
  });
});

describe('safeOutput: the last guard on a line the client writes', () => {
  it("keeps the client's own colours", () => {
    const line = `${styleText('yellow', 'Approval needed')} ${styleText(['bold', 'dim'], 'x')} ${ESC}[38;5;208morange${ESC}[39m`;
    expect(safeOutput(line)).toBe(line);
  });

  it.each(HOSTILE.filter(([name]) => !name.startsWith('SGR')))('removes, between colours: %s', (_name, sequence) => {
    const shown = safeOutput(`${styleText('green', '✔')} ${sequence} done`);
    expect(obeyed(shown.replace(STYLING, ''))).toEqual([]);
    expect(shown).toContain(styleText('green', '✔'));
  });
});

describe('safeJson: --json output', () => {
  it('parses back to the exact strings while showing nothing a terminal obeys', () => {
    const value = { title: `a${ESC}]2;x${BEL}\u009b2J\u202Eb\u{E0041}`, emoji: '👍 日本' };
    const json = safeJson(value);
    expect(obeyed(json)).toEqual([]);
    expect(json).not.toContain('\u202E');
    expect(JSON.parse(json)).toEqual(value);
  });
});
