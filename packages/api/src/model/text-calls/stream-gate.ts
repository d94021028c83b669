import { THINK_BLOCKS } from './thinking.js';

/** Where a tool call written as text may begin: from there on, text waits for the end of the answer. */
const CALL_MARKERS = [
  '```',
  '<tool_call',
  '<function=',
  '<|python_tag|>',
  '[TOOL_CALLS]',
  '<\uFF5Ctool\u2581call',
  '<|tool\u2581call',
  '<|tool_call',
  // gpt-oss: `<|start|>assistant<|channel|>commentary to=functions.NAME ...`
  '<|start|>',
  '<|channel|>commentary',
  '\n{',
];
const THINK_OPENINGS = THINK_BLOCKS.map((block) => block.open);

interface Marker {
  text: string;
  think: boolean;
  /** The code of its second character: most characters that start a marker are not followed by it. */
  second: number;
}

const toMarker = (text: string, think: boolean): Marker => ({ text, think, second: text.charCodeAt(1) });

/**
 * Markers by the code of their first character (all ASCII), reasoning openings first: at one
 * position a reasoning opening wins over a call marker. A character with no entry cannot start a
 * marker, so most of an answer is passed over with one table look-up per character.
 */
const MARKERS: readonly Marker[] = [...THINK_OPENINGS.map((text) => toMarker(text, true)), ...CALL_MARKERS.map((text) => toMarker(text, false))];
const BY_FIRST = new Array<readonly Marker[] | undefined>(128).fill(undefined);
for (const marker of MARKERS) {
  const code = marker.text.charCodeAt(0);
  if (code >= 128) throw new Error(`A marker must start with an ASCII character: ${marker.text}`);
  if (marker.text.length < 2) throw new Error(`A marker must be two characters at least: ${marker.text}`);
  BY_FIRST[code] = [...(BY_FIRST[code] ?? []), marker];
}
const LONGEST = Math.max(...MARKERS.map((m) => m.text.length));
// StreamGate.passPlain relies on it: a marker's beginning at the end of a chunk hides no other.
for (const a of MARKERS) {
  for (const b of MARKERS) if (a.text.indexOf(b.text, 1) > 0) throw new Error(`A marker must not hold another: ${a.text}`);
}

/** 1 at the code of a character that starts a marker: the per-token check reads only this. */
const STARTS = new Uint8Array(128);
for (const marker of MARKERS) STARTS[marker.text.charCodeAt(0)] = 1;
/**
 * No marker starts above this code (a backtick): lowercase letters, most of any answer, are passed
 * over with one comparison instead of a table read.
 */
const HIGHEST_START = Math.max(...MARKERS.map((m) => m.text.charCodeAt(0)));

function mayStartMarker(chunk: string): boolean {
  for (let i = 0; i < chunk.length; i++) {
    const code = chunk.charCodeAt(i);
    if (code <= HIGHEST_START && STARTS[code] === 1) return true;
  }
  return false;
}

interface Hit {
  at: number;
  marker: string;
  think: boolean;
}

const isSpace = (c: string | undefined): boolean => c !== undefined && /\s/.test(c);

/**
 * Decides, chunk by chunk, which streamed text may go out now. Reasoning blocks are dropped;
 * text from where a tool call may begin is held until the answer is complete. Only the text not
 * yet decided (a marker's length at most, outside reasoning and held text) is looked at again
 * with each chunk, so a long answer costs linear time however small its chunks.
 */
export class StreamGate {
  /** Text not decided yet: short, except while the start of the answer is only whitespace. */
  private pending = '';
  /** Set once a call may have begun: everything from there, kept for the end of the answer. */
  private held: string[] | undefined;
  private thinkClose: string | undefined;
  private afterThink = false;
  private started = false;
  /**
   * The answer has begun, outside reasoning and not held: the state nearly every token arrives
   * in. Kept as one field so that the per-token check reads one field, not four.
   */
  private plain = false;
  /**
   * Whitespace the answer opened with, set aside token by token until what follows it decides
   * whether it goes out or is held. Kept out of `pending`, so that a long blank run is looked at
   * once rather than again with every token.
   */
  private blank: string[] = [];

  /** The text that may go out now. */
  push(chunk: string): string {
    if (this.plain) {
      // The common case, checked in time proportional to the chunk alone.
      if (this.pending === '') {
        if (!mayStartMarker(chunk)) return chunk;
        return this.passPlain(chunk) ?? this.general(chunk);
      }
      // A marker's possible beginning from the chunk before (a newline, a backtick) and this
      // chunk are both short: one pass over the two decides them, as the general path would.
      const text = this.pending + chunk;
      return this.passPlain(text) ?? this.general(text);
    }
    if (this.held !== undefined) {
      this.held.push(chunk);
      return '';
    }
    this.pending += chunk;
    return this.drain(false);
  }

  /** Text the plain pass could not decide (it holds a whole marker): pending is all of it. */
  private general(text: string): string {
    this.pending = text;
    return this.drain(false);
  }

  /**
   * Plain text with a character that may start a marker (a newline, a backtick) but no whole
   * marker: one pass sends all but a marker's possible beginning at its end, which stays pending.
   * Undefined, with nothing changed, when the text holds a whole marker. No marker holds another
   * after its first character, so a partial marker at the end cannot hide a whole one.
   */
  private passPlain(text: string): string | undefined {
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      const candidates = code <= HIGHEST_START ? BY_FIRST[code] : undefined;
      if (candidates === undefined) continue;
      // Read within the text only: a read past its end costs optimised code a deoptimisation.
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : -1;
      for (const marker of candidates) if (next === marker.second && text.startsWith(marker.text, i)) return undefined;
      for (const marker of candidates) {
        if (text.length - i < marker.text.length && isPrefixAt(marker.text, text, i)) {
          this.pending = text.slice(i);
          return text.slice(0, i);
        }
      }
    }
    this.pending = '';
    return text;
  }

  /** The rest, once the answer is complete and held no call: reasoning still dropped. */
  finish(): string {
    this.pending = this.takeBlank() + this.pending;
    if (this.held !== undefined) {
      this.pending += this.held.join('');
      this.held = undefined;
    }
    return this.drain(true);
  }

  private drain(final: boolean): string {
    const text = this.pending;
    let pos = 0;
    let out = '';
    for (;;) {
      if (this.thinkClose !== undefined) {
        const at = text.indexOf(this.thinkClose, pos);
        if (at < 0) {
          // Keep only what could be the start of the closing tag.
          pos = final ? text.length : Math.max(pos, text.length - this.thinkClose.length + 1);
          break;
        }
        pos = at + this.thinkClose.length;
        this.thinkClose = undefined;
        this.afterThink = true;
      }
      if (this.afterThink) {
        while (isSpace(text[pos])) pos++;
        if (pos >= text.length && !final) break;
        this.afterThink = false;
      }
      if (!this.started && !final) {
        const start = this.startOf(text, pos);
        if (start === 'blank') {
          this.blank.push(text.slice(pos));
          pos = text.length;
          break;
        }
        if (start === 'wait') break;
        // Nothing went out in this drain before the answer's start: the blank run comes first.
        const blank = this.takeBlank();
        if (start === 'call') return this.hold(out, blank + text.slice(pos));
        out = blank + out;
      }
      const hit = firstMarker(text, pos, final);
      const until = hit?.at ?? (final ? text.length : partialMarkerStart(text, Math.max(pos, text.length - LONGEST + 1)));
      out += text.slice(pos, until);
      pos = Math.max(pos, until);
      if (hit === undefined) break;
      if (!hit.think) return this.hold(out, text.slice(pos));
      this.thinkClose = THINK_BLOCKS.find((b) => b.open === hit.marker)!.close;
      pos = hit.at + hit.marker.length;
    }
    this.pending = text.slice(pos);
    this.plain = this.started && this.thinkClose === undefined && !this.afterThink;
    return out;
  }

  private takeBlank(): string {
    const blank = this.blank.join('');
    this.blank = [];
    return blank;
  }

  private hold(out: string, rest: string): string {
    this.held = [rest];
    this.pending = '';
    this.plain = false;
    return out;
  }

  /** An answer that opens with a JSON value is held whole: it is likely a call. */
  private startOf(text: string, from: number): 'blank' | 'wait' | 'call' | 'text' {
    let at = from;
    while (isSpace(text[at])) at++;
    if (at >= text.length) return 'blank';
    const rest = text.slice(at, at + LONGEST);
    if (THINK_OPENINGS.some((m) => rest.startsWith(m))) return 'text';
    if (rest.length < LONGEST && THINK_OPENINGS.some((m) => m.startsWith(rest))) return 'wait';
    this.started = true;
    return rest.startsWith('{') || rest.startsWith('[') ? 'call' : 'text';
  }
}

/** Up to this many characters, one look at each character beats one search per marker. */
const SHORT_TEXT = 64;

/**
 * The first whole marker from `from` (only reasoning openings when `final`). Streamed tokens are
 * short and take the per-character pass; a long text takes one native search per marker. Both
 * find the same marker.
 */
function firstMarker(text: string, from: number, final: boolean): Hit | undefined {
  return text.length - from <= SHORT_TEXT ? firstMarkerByCharacter(text, from, final) : firstMarkerBySearch(text, from, final);
}

function firstMarkerByCharacter(text: string, from: number, final: boolean): Hit | undefined {
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const candidates = code < 128 ? BY_FIRST[code] : undefined;
    if (candidates === undefined) continue;
    for (const marker of candidates) {
      if ((!final || marker.think) && text.startsWith(marker.text, i)) return { at: i, marker: marker.text, think: marker.think };
    }
  }
  return undefined;
}

function firstMarkerBySearch(text: string, from: number, final: boolean): Hit | undefined {
  let best: Hit | undefined;
  for (const marker of MARKERS) {
    if (final && !marker.think) continue;
    const at = text.indexOf(marker.text, from);
    if (at >= 0 && (best === undefined || at < best.at)) best = { at, marker: marker.text, think: marker.think };
  }
  return best;
}

/** Where the longest end of the text that is the first part of a marker begins (the text's length when none). */
function partialMarkerStart(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const candidates = code < 128 ? BY_FIRST[code] : undefined;
    if (candidates === undefined) continue;
    for (const marker of candidates) if (text.length - i < marker.text.length && isPrefixAt(marker.text, text, i)) return i;
  }
  return text.length;
}

/** True when the text from `at` to its end is the first part of `marker`. */
function isPrefixAt(marker: string, text: string, at: number): boolean {
  for (let i = at; i < text.length; i++) if (text.charCodeAt(i) !== marker.charCodeAt(i - at)) return false;
  return true;
}
