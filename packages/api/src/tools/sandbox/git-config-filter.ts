import { isAbsolute } from 'node:path';
import { isWithin, resolveReal } from './paths.js';

/*
 * The config of a repository a command made (`git init`, `git clone`, or an interpreter laying out
 * a `.git` by hand) is the command's to write, and git outside the sandbox would obey it: an
 * fsmonitor, a pager, an alias, a filter, a hooks path, an include. What stays is what git itself
 * writes when it makes or clones a repository, plus an identity; everything else is dropped.
 */

/** `section.key` (lower case) kept in any section without a subsection. */
const PLAIN_KEYS = new Set([
  'core.repositoryformatversion',
  'core.filemode',
  'core.bare',
  'core.logallrefupdates',
  'core.ignorecase',
  'core.precomposeunicode',
  'core.symlinks',
  'extensions.objectformat',
  'extensions.refstorage',
  'extensions.worktreeconfig',
  'user.name',
  'user.email',
]);

/** Keys kept in `[section "name"]`: what clone, `submodule init` and `branch --track` write. */
const SUBSECTION_KEYS: Record<string, ReadonlySet<string>> = {
  remote: new Set(['url', 'pushurl', 'fetch', 'push', 'tagopt', 'mirror']),
  branch: new Set(['remote', 'merge', 'rebase', 'pushremote']),
  submodule: new Set(['url', 'active', 'branch']),
};

/** Config bigger than this is not read: nothing of it is kept. */
export const MAX_CONFIG_BYTES = 64 * 1024;

const HEADER = /^\s*\[\s*([A-Za-z0-9-]+)(?:\s+"([^"\\\n]*)")?\s*\]\s*(?:[;#].*)?$/;
const ENTRY = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/;
const COMMENT_OR_BLANK = /^\s*(?:[;#].*)?$/;
/** A value kept verbatim: printable, no quote or backslash, so it reads back the same. */
const PLAIN_VALUE = /^[^"\\\p{Cc}]*$/u;

export interface FilteredConfig {
  text: string;
  /** `section[.sub].key` of every entry dropped (and `(unreadable line)` for text that does not parse). */
  dropped: string[];
}

/**
 * Keeps the allowed entries of `text`, written anew one per line. `gitDir` and `roots` judge
 * `core.worktree` (what `git submodule` writes in `.git/modules/<name>/config`): kept only when it
 * names a directory inside the allowed paths. Linear in the text; lines that do not parse (and
 * everything below them until the next section header) are dropped, never guessed at.
 */
export function filterRepositoryConfig(text: string, gitDir: string, roots: readonly string[]): FilteredConfig {
  const out: string[] = [];
  const dropped: string[] = [];
  let section: { name: string; sub?: string; written: boolean } | undefined;
  let continued = false;
  for (const line of text.split('\n')) {
    const wasContinued = continued;
    continued = line.endsWith('\\');
    // Dropped, never kept as it was: git ends a comment at the newline whatever precedes it, so a
    // comment ending in a backslash continues nothing and git reads this line as an entry of its own.
    if (wasContinued) {
      dropped.push('(continuation line)');
      continue;
    }
    if (COMMENT_OR_BLANK.test(line)) continue;
    const header = HEADER.exec(line);
    if (header !== null) {
      section = { name: (header[1] as string).toLowerCase(), ...(header[2] === undefined ? {} : { sub: header[2] }), written: false };
      continue;
    }
    const entry = ENTRY.exec(line);
    if (entry === null || section === undefined) {
      dropped.push('(unreadable line)');
      section = undefined;
      continue;
    }
    const key = (entry[1] as string).toLowerCase();
    const value = (entry[2] ?? '').replace(/\s*[;#].*$/, '').trim();
    const name = section.sub === undefined ? `${section.name}.${key}` : `${section.name}.${section.sub}.${key}`;
    if (!PLAIN_VALUE.test(value) || !kept(section.name, section.sub, key, value, gitDir, roots)) {
      dropped.push(name);
      continue;
    }
    if (!section.written) {
      out.push(section.sub === undefined ? `[${section.name}]` : `[${section.name} "${section.sub}"]`);
      section.written = true;
    }
    out.push(`\t${key} = ${value}`);
  }
  return { text: out.length === 0 ? '' : `${out.join('\n')}\n`, dropped };
}

function kept(section: string, sub: string | undefined, key: string, value: string, gitDir: string, roots: readonly string[]): boolean {
  if (sub !== undefined) return SUBSECTION_KEYS[section]?.has(key) === true;
  if (section === 'core' && key === 'worktree') {
    if (isAbsolute(value) || value.startsWith('~')) return false;
    // As the kernel resolves it: a link inside the allowed paths may lead out of them.
    const target = realOrUndefined(`${gitDir}/${value}`);
    return target !== undefined && roots.some((root) => isWithin(root, target));
  }
  return PLAIN_KEYS.has(`${section}.${key}`);
}

function realOrUndefined(path: string): string | undefined {
  try {
    return resolveReal(path);
  } catch {
    return undefined;
  }
}
