import { nulFields } from './git.js';
import type { ShadowRepo } from './shadow-repo.js';

export type ChangeKind = 'added' | 'modified' | 'deleted';

export interface FileChange {
  path: string;
  change: ChangeKind;
  additions: number;
  deletions: number;
}

export interface Changes {
  files: FileChange[];
  diff: string;
}

/** A diff longer than this is cut (EXTENSIONS.md section 4). */
export const MAX_DIFF_BYTES = 1024 * 1024;

const KINDS: Record<string, ChangeKind> = { A: 'added', M: 'modified', D: 'deleted', T: 'modified' };

const TREE_DIFF = ['diff-tree', '-r', '--no-renames', '--no-ext-diff', '--no-textconv', '--no-color'];

/** The files that differ between two snapshots, with counts of changed lines (0 for binary files). */
export async function changedFiles(repo: ShadowRepo, before: string, after: string): Promise<FileChange[]> {
  const [status, numstat] = await Promise.all([
    repo.git([...TREE_DIFF, '-z', '--name-status', before, after]),
    repo.git([...TREE_DIFF, '-z', '--numstat', before, after]),
  ]);
  const counts = new Map<string, { additions: number; deletions: number }>();
  for (const record of nulFields(numstat.stdout)) {
    const [added = '-', deleted = '-', path = ''] = record.split('\t');
    counts.set(path, { additions: Number(added) || 0, deletions: Number(deleted) || 0 });
  }
  const fields = nulFields(status.stdout);
  const files: FileChange[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const path = fields[i + 1] as string;
    files.push({ path, change: KINDS[(fields[i] as string)[0] ?? 'M'] ?? 'modified', ...(counts.get(path) ?? { additions: 0, deletions: 0 }) });
  }
  return files;
}

/**
 * The paths that differ between two snapshots as git's byte strings (latin1), for the revert:
 * a name that is not UTF-8 must reach the file system byte for byte.
 */
export async function changedPaths(repo: ShadowRepo, before: string, after: string): Promise<string[]> {
  return nulFields((await repo.git([...TREE_DIFF, '-z', '--name-only', before, after])).stdout, 'latin1');
}

/**
 * The unified diff between two snapshots, as git writes it: a mode change shows as `old mode` /
 * `new mode`, a binary file as `Binary files ... differ`. Cut at MAX_DIFF_BYTES with a note.
 */
export async function unifiedDiff(repo: ShadowRepo, before: string, after: string, notes: readonly string[]): Promise<string> {
  const { stdout, truncated } = await repo.git([...TREE_DIFF, '-p', before, after], { maxOutputBytes: MAX_DIFF_BYTES });
  const header = notes.map((note) => `# ${note}\n`).join('');
  if (!truncated) return header + stdout.toString('utf8');
  // Cut at the last whole line, never inside a UTF-8 character.
  const cut = stdout.lastIndexOf(0x0a);
  return `${header}${stdout.subarray(0, cut + 1).toString('utf8')}# Diff cut at 1 MiB: the rest is not shown.\n`;
}

/** The whole answer of GET /runs/{id}/changes. */
export async function describeChanges(repo: ShadowRepo, before: string, after: string, notes: readonly string[]): Promise<Changes> {
  const [files, diff] = await Promise.all([changedFiles(repo, before, after), unifiedDiff(repo, before, after, notes)]);
  return { files, diff };
}
