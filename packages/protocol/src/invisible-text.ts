// Characters a reader cannot see or that reorder what they see: format characters (bidi
// overrides and isolates, zero-width space and joiners, BOM, tags), private-use, unassigned and
// lone surrogate code points, line and paragraph separators, and every space that is not U+0020.
// The service refuses them in shell commands; the client names them in what it asks to approve.
const INVISIBLE_CATEGORY = /^[\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}\p{Zs}]$/u;

/** Marks and letters that render as nothing: grapheme joiner, Hangul fillers, variation selectors. */
const INVISIBLE_RANGES: [number, number][] = [
  [0x034f, 0x034f],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180b, 0x180f],
  [0x3164, 0x3164],
  [0xffa0, 0xffa0],
  [0xfe00, 0xfe0f],
  [0xe0100, 0xe01ef],
];

/** Whether one character (one code point) is invisible or reorders text, so two strings that differ by it look alike. */
export function isInvisibleCharacter(char: string): boolean {
  const code = char.codePointAt(0) ?? 0;
  return (char !== ' ' && INVISIBLE_CATEGORY.test(char)) || INVISIBLE_RANGES.some(([low, high]) => code >= low && code <= high);
}
