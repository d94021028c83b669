import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Git } from './git.js';
import type { ReleasePlan } from './release-plan.js';

/** A step after the first write failed; the message says what state the repository is in. */
export class ReleaseFailure extends Error {}

const paths = (plan: ReleasePlan): string[] => plan.changes.map((c) => c.path);

/** Writes the new files and commits exactly them; on failure puts the files back as they were. */
export function commitRelease(git: Git, root: string, plan: ReleasePlan): string {
  for (const change of plan.changes) writeFileSync(join(root, change.path), change.after);
  try {
    git.run('add', '--', ...paths(plan));
    git.run('commit', '--quiet', '-m', plan.message, '--', ...paths(plan));
  } catch (error) {
    for (const change of plan.changes) writeFileSync(join(root, change.path), change.before);
    git.tryRun('reset', '--quiet', '--', ...paths(plan));
    throw new ReleaseFailure(`commit failed, files restored: ${(error as Error).message}`);
  }
  // HEAD, not the commit git reported: hooks may have moved it, and the check that follows is
  // about what HEAD is now.
  const head = git.head();
  if (head === undefined) throw new ReleaseFailure('no HEAD after committing');
  return head;
}

/**
 * The tag must land on the version commit and nothing else (docs/deployment.md, "Releasing a
 * package"): a hook or a concurrent process that moved HEAD, or a commit that holds other
 * changes, stops the release before any tag exists.
 */
export function verifyReleaseCommit(git: Git, plan: ReleasePlan, commit: string): void {
  const problems: string[] = [];
  const [, ...parents] = git.run('rev-list', '--parents', '-n', '1', commit).split(' ');
  if (parents.length !== 1 || parents[0] !== plan.parent) problems.push(`its parent is not ${plan.parent}`);
  const subject = git.run('log', '-1', '--format=%s', commit);
  if (subject !== plan.message) problems.push(`its message is "${subject}", not "${plan.message}"`);
  const changed = git.run('diff', '--name-only', plan.parent, commit).split('\n').filter(Boolean).sort();
  if (changed.join('\n') !== paths(plan).sort().join('\n')) problems.push(`it changes ${changed.join(', ') || 'nothing'}`);
  for (const change of plan.changes) {
    if (git.tryRun('show', `${commit}:${change.path}`) !== change.after.trimEnd()) problems.push(`${change.path} differs from the release edit`);
  }
  if (problems.length > 0) {
    throw new ReleaseFailure(`HEAD ${commit} is not the version commit: ${problems.join('; ')}. No tag was created; inspect the history`);
  }
}

export function tagRelease(git: Git, plan: ReleasePlan, commit: string): void {
  if (git.head() !== commit) throw new ReleaseFailure(`HEAD moved away from the version commit ${commit}; no tag was created`);
  // whitespace cleanup: the default (strip) would drop the notes' "### Added" lines as comments.
  git.run('tag', '--annotate', '--cleanup=whitespace', plan.tag, '--message', plan.tagMessage, commit);
  const tagged = git.tryRun('rev-parse', '--verify', '--quiet', `refs/tags/${plan.tag}^{commit}`);
  if (tagged !== commit) throw new ReleaseFailure(`tag ${plan.tag} points at ${tagged ?? 'nothing'}, not ${commit}`);
}
