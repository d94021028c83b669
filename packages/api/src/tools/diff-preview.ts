import { structuredPatch } from 'diff';
import { counted } from './text.js';

/** Enough of a diff to check an edit; a larger one is cut with a note. */
export const DIFF_PREVIEW_MAX_LINES = 200;
/** Lines of unchanged text shown around a change. */
const CONTEXT_LINES = 3;
/**
 * The changed region (what lies between the lines both texts share at their start and end) is
 * diffed only up to this size. A line diff costs far more than the text's length on dissimilar
 * texts (jsdiff's Myers took 20 s on the event loop for 15,000 replaced lines), and its line
 * splitting alone took seconds on a file of millions of short lines; a region this small costs
 * milliseconds whatever it holds.
 */
const MAX_REGION_LINES = 1_000;
const MAX_REGION_CHARS = 100_000;
/** Beyond this many changed lines inside the region, the diff is given up. */
const MAX_EDIT_LENGTH = 500;

function commonPrefixLength(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let at = 0;
  while (at < max && a.charCodeAt(at) === b.charCodeAt(at)) at++;
  return at;
}

/** Length of the common end of `a` and `b` that starts at or after `from` in both. */
function commonSuffixLength(a: string, b: string, from: number): number {
  const max = Math.min(a.length, b.length) - from;
  let length = 0;
  while (length < max && a.charCodeAt(a.length - 1 - length) === b.charCodeAt(b.length - 1 - length)) length++;
  return length;
}

/** Newlines in `text` between `from` and `to`. */
function countNewlines(text: string, from: number, to: number): number {
  let count = 0;
  for (let at = text.indexOf('\n', from); at !== -1 && at < to; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

/** Where the line `lines` lines before the line starting at `start` begins. */
function linesBack(text: string, start: number, lines: number): number {
  let at = start;
  for (let i = 0; i < lines && at > 0; i++) at = at >= 2 ? text.lastIndexOf('\n', at - 2) + 1 : 0;
  return at;
}

/** Where the text `lines` whole lines after `start` (a line start) ends. */
function linesForward(text: string, start: number, lines: number): number {
  let at = start;
  for (let i = 0; i < lines && at < text.length; i++) {
    const newline = text.indexOf('\n', at);
    at = newline === -1 ? text.length : newline + 1;
  }
  return at;
}

/**
 * The texts' changed region, in whole lines: both texts agree before `start` and from `beforeEnd`
 * (`afterEnd`) on. Found by comparing characters once, so it costs the texts' length.
 */
function changedRegion(before: string, after: string): { start: number; beforeEnd: number; afterEnd: number } {
  const prefix = commonPrefixLength(before, after);
  const start = prefix === 0 ? 0 : before.lastIndexOf('\n', prefix - 1) + 1;
  const suffix = commonSuffixLength(before, after, start);
  // The shared end begins after a newline inside it, so it is whole lines in both texts.
  const lineEnd = (text: string): number => {
    const newline = text.indexOf('\n', text.length - suffix);
    return newline === -1 ? text.length : newline + 1;
  };
  return { start, beforeEnd: Math.max(start, lineEnd(before)), afterEnd: Math.max(start, lineEnd(after)) };
}

/** Lines of `text` between `from` and `to`, a last one without its newline included. */
function countLines(text: string, from: number, to: number): number {
  return countNewlines(text, from, to) + (to > from && text.charCodeAt(to - 1) !== 10 ? 1 : 0);
}

function tooLarge(before: string, after: string, region: ReturnType<typeof changedRegion>): string {
  const firstLine = countNewlines(before, 0, region.start) + 1;
  const removed = counted(countLines(before, region.start, region.beforeEnd), 'line');
  const added = counted(countLines(after, region.start, region.afterEnd), 'line');
  return `(the change is too large to show as a diff: ${removed} from line ${firstLine} on became ${added})`;
}

/**
 * A unified diff of `before` → `after` with 3 lines of context, headed by `path`. Only the changed
 * region and its context are diffed, so an edit of one line in a file of millions costs the
 * file's length once; a region too large to diff cheaply is described instead.
 */
export function diffPreview(path: string, before: string, after: string): string {
  const region = changedRegion(before, after);
  const regionChars = Math.max(region.beforeEnd, region.afterEnd) - region.start;
  if (
    regionChars > MAX_REGION_CHARS ||
    countNewlines(before, region.start, region.beforeEnd) > MAX_REGION_LINES ||
    countNewlines(after, region.start, region.afterEnd) > MAX_REGION_LINES
  ) {
    return tooLarge(before, after, region);
  }
  const from = linesBack(before, region.start, CONTEXT_LINES);
  const shownBefore = before.slice(from, linesForward(before, region.beforeEnd, CONTEXT_LINES));
  const shownAfter = after.slice(from, linesForward(after, region.afterEnd, CONTEXT_LINES));
  const patch = structuredPatch(path, path, shownBefore, shownAfter, undefined, undefined, { context: CONTEXT_LINES, maxEditLength: MAX_EDIT_LENGTH });
  if (!patch) return tooLarge(before, after, region);
  const linesAbove = countNewlines(before, 0, from);
  const lines = [`--- ${path}`, `+++ ${path}`];
  for (const hunk of patch.hunks) {
    lines.push(`@@ -${hunk.oldStart + linesAbove},${hunk.oldLines} +${hunk.newStart + linesAbove},${hunk.newLines} @@`, ...hunk.lines);
  }
  if (lines.length <= DIFF_PREVIEW_MAX_LINES) return lines.join('\n');
  const hidden = lines.length - DIFF_PREVIEW_MAX_LINES;
  return `${lines.slice(0, DIFF_PREVIEW_MAX_LINES).join('\n')}\n... (${hidden} more diff lines not shown)`;
}
