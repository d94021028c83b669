import type { FileMatches, LineRecord } from './backend.js';

interface Entry {
  file: FileMatches;
  matches: number;
}

const byPath = (a: Entry, b: Entry): number => (a.file.path < b.file.path ? -1 : a.file.path > b.file.path ? 1 : 0);

const countMatches = (file: FileMatches): number => file.lines.reduce((n, line) => n + (line.match ? 1 : 0), 0);

/** The records of a file up to its `keep`-th matching line and that line's own after-context. */
function cutRecords(lines: readonly LineRecord[], keep: number, contextLines: number): LineRecord[] {
  const kept: LineRecord[] = [];
  let matches = 0;
  let lastMatchLine = 0;
  for (const line of lines) {
    if (matches === keep && (line.match || line.line > lastMatchLine + contextLines)) break;
    if (line.match) {
      matches++;
      lastMatchLine = line.line;
    }
    kept.push(line);
  }
  return kept;
}

export interface CollectedMatches {
  /** Sorted by path, lines in order, at most `limit` matching lines in all. */
  files: FileMatches[];
  totalMatches: number;
  totalFiles: number;
  shownMatches: number;
}

/**
 * Gathers search results arriving in any order and keeps the first `limit` matching lines by
 * (path, line), so the answer does not depend on which backend or thread found what first.
 * Memory stays bounded: files that can no longer make the cut are dropped as results arrive.
 */
export class MatchCollector {
  private entries: Entry[] = [];
  private kept = 0;
  private totalMatches = 0;
  private totalFiles = 0;

  constructor(private readonly limit: number) {}

  add(file: FileMatches): void {
    const matches = countMatches(file);
    this.totalMatches += matches;
    this.totalFiles++;
    this.entries.push({ file, matches });
    this.kept += matches;
    if (this.kept > 2 * this.limit) this.dropBeyondLimit();
  }

  /** Keeps the files (by path) holding the first `limit` matches; later ones cannot be shown. */
  private dropBeyondLimit(): void {
    this.entries.sort(byPath);
    let kept = 0;
    let count = 0;
    for (const entry of this.entries) {
      if (kept >= this.limit) break;
      kept += entry.matches;
      count++;
    }
    this.entries.length = count;
    this.kept = kept;
  }

  /** `contextLines` bounds the context kept after the last matching line shown. */
  result(contextLines: number): CollectedMatches {
    this.dropBeyondLimit();
    let remaining = this.limit;
    const files = this.entries.map(({ file, matches }) => {
      const keep = Math.min(matches, remaining);
      remaining -= keep;
      return keep === matches ? file : { path: file.path, lines: cutRecords(file.lines, keep, contextLines) };
    });
    return { files, totalMatches: this.totalMatches, totalFiles: this.totalFiles, shownMatches: this.limit - remaining };
  }
}
