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
const ALL_MARKERS = [...CALL_MARKERS, ...THINK_OPENINGS];
const LONGEST = Math.max(...ALL_MARKERS.map((m) => m.length));
/** Every proper prefix of a marker: what the end of a chunk may hold of a marker cut in two. */
const MARKER_PREFIXES = new Set(ALL_MARKERS.flatMap((m) => Array.from({ length: m.length - 1 }, (_, i) => m.slice(0, i + 1))));
/** Every marker starts with one of these: a chunk without any cannot start one. */
const MARKER_STARTS = new Set(ALL_MARKERS.map((m) => m.charCodeAt(0)));

function mayStartMarker(chunk: string): boolean {
  for (let i = 0; i < chunk.length; i++) if (MARKER_STARTS.has(chunk.charCodeAt(i))) return true;
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

  /** The text that may go out now. */
  push(chunk: string): string {
    if (this.held !== undefined) {
      this.held.push(chunk);
      return '';
    }
    // The common case, checked in time proportional to the chunk alone.
    if (this.pending === '' && this.started && this.thinkClose === undefined && !this.afterThink && !mayStartMarker(chunk)) return chunk;
    this.pending += chunk;
    return this.drain(false);
  }

  /** The rest, once the answer is complete and held no call: reasoning still dropped. */
  finish(): string {
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
        if (start === 'wait') break;
        if (start === 'call') return this.hold(out, text.slice(pos));
      }
      const hit = nextMarker(text, pos, final);
      const until = hit?.at ?? (final ? text.length : text.length - partialMarkerLength(text, pos));
      out += text.slice(pos, until);
      pos = Math.max(pos, until);
      if (hit === undefined) break;
      if (!hit.think) return this.hold(out, text.slice(pos));
      this.thinkClose = THINK_BLOCKS.find((b) => b.open === hit.marker)!.close;
      pos = hit.at + hit.marker.length;
    }
    this.pending = text.slice(pos);
    return out;
  }

  private hold(out: string, rest: string): string {
    this.held = [rest];
    this.pending = '';
    return out;
  }

  /** An answer that opens with a JSON value is held whole: it is likely a call. */
  private startOf(text: string, from: number): 'wait' | 'call' | 'text' {
    let at = from;
    while (isSpace(text[at])) at++;
    if (at >= text.length) return 'wait';
    const rest = text.slice(at, at + LONGEST);
    if (THINK_OPENINGS.some((m) => rest.startsWith(m))) return 'text';
    if (rest.length < LONGEST && THINK_OPENINGS.some((m) => m.startsWith(rest))) return 'wait';
    this.started = true;
    return rest.startsWith('{') || rest.startsWith('[') ? 'call' : 'text';
  }
}

function nextMarker(text: string, from: number, final: boolean): Hit | undefined {
  let best: Hit | undefined;
  const consider = (marker: string, think: boolean): void => {
    const at = text.indexOf(marker, from);
    if (at >= 0 && (best === undefined || at < best.at)) best = { at, marker, think };
  };
  for (const marker of THINK_OPENINGS) consider(marker, true);
  if (!final) for (const marker of CALL_MARKERS) consider(marker, false);
  return best;
}

/** Length of the text's end that may be the first part of a marker cut across two chunks. */
function partialMarkerLength(text: string, from: number): number {
  for (let n = Math.min(LONGEST - 1, text.length - from); n > 0; n--) {
    if (MARKER_PREFIXES.has(text.slice(text.length - n))) return n;
  }
  return 0;
}
