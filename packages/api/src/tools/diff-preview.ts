import { structuredPatch } from 'diff';

/** Enough of a diff to check an edit; a larger one is cut with a note. */
export const DIFF_PREVIEW_MAX_LINES = 200;
/** Beyond this many changed lines the diff is not computed (its cost grows with the change). */
const MAX_EDIT_LENGTH = 20_000;

/** A unified diff of `before` → `after` with 3 lines of context, headed by `path`. */
export function diffPreview(path: string, before: string, after: string): string {
  const patch = structuredPatch(path, path, before, after, undefined, undefined, { context: 3, maxEditLength: MAX_EDIT_LENGTH });
  if (!patch) return '(the change is too large to show as a diff)';
  const lines = [`--- ${path}`, `+++ ${path}`];
  for (const hunk of patch.hunks) {
    lines.push(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`, ...hunk.lines);
  }
  if (lines.length <= DIFF_PREVIEW_MAX_LINES) return lines.join('\n');
  const hidden = lines.length - DIFF_PREVIEW_MAX_LINES;
  return `${lines.slice(0, DIFF_PREVIEW_MAX_LINES).join('\n')}\n... (${hidden} more diff lines not shown)`;
}
