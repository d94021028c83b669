import type { Fd, ResolvedRedirection } from '../command-policy/index.js';

/** Where one of a command's descriptors 0, 1, 2 leads. */
export type FdTarget =
  | { kind: 'null' }
  /** fd 0 reads what the previous command of the pipeline writes. */
  | { kind: 'previous' }
  /** Writes go to the next command of the pipeline. */
  | { kind: 'next' }
  /** Writes go to the tool's output. */
  | { kind: 'output' }
  | { kind: 'file'; path: string; mode: 'read' | 'write' | 'append' }
  | { kind: 'text'; text: string };

export type FdTargets = [FdTarget, FdTarget, FdTarget];

/** Bash treats these names itself instead of opening them; opening them here would reach the service's own streams. */
const SPECIAL_FILES: Record<string, Fd | 'null'> = { '/dev/null': 'null', '/dev/stdin': 0, '/dev/stdout': 1, '/dev/stderr': 2 };

function fileTarget(fds: FdTargets, path: string, mode: 'read' | 'write' | 'append'): FdTarget {
  const special = SPECIAL_FILES[path];
  if (special === 'null') return { kind: 'null' };
  if (special !== undefined) return fds[special];
  return { kind: 'file', path, mode };
}

/**
 * Applies a command's redirections in order, as bash does: `2>&1 >f` sends stderr to where stdout
 * was, then stdout to f.
 */
export function planDescriptors(redirections: ResolvedRedirection[], first: boolean, last: boolean): FdTargets {
  const fds: FdTargets = [first ? { kind: 'null' } : { kind: 'previous' }, last ? { kind: 'output' } : { kind: 'next' }, { kind: 'output' }];
  for (const r of redirections) {
    if (r.kind === 'read') fds[r.fd] = fileTarget(fds, r.path, 'read');
    else if (r.kind === 'write') fds[r.fd] = fileTarget(fds, r.path, r.append ? 'append' : 'write');
    else if (r.kind === 'duplicate') fds[r.fd] = fds[r.from];
    else fds[r.fd] = { kind: 'text', text: r.text };
  }
  return fds;
}
