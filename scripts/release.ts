/**
 * Releases one package: version bump, changelog, commit, then the tag on that commit.
 *
 *   npm run release -- <api|cli> <version> [--remote <name>] [--date YYYY-MM-DD] [--root <dir>]
 *
 * The repository is --root, else $MADA_REPO_ROOT, else the one containing the working directory.
 * Progress goes to stderr; stdout gets only the push command, so it can be captured.
 * Exit status: 0 released, 1 refused or failed, 2 usage error.
 */
import { parseArgs } from 'node:util';
import { Git, GitError } from './lib/git.js';
import { PACKAGES, planRelease, ReleaseRefusal } from './lib/release-plan.js';
import { commitRelease, ReleaseFailure, tagRelease, verifyReleaseCommit } from './lib/release-steps.js';
import { parseSemVer } from './lib/semver.js';

const USAGE = 'usage: npm run release -- <api|cli> <version> [--remote <name>] [--date YYYY-MM-DD] [--root <dir>]';

class UsageError extends Error {}

interface Invocation {
  release: string;
  version: string;
  root: string;
  date: string;
  remote?: string;
}

/** Keep a Changelog dates are ISO dates; UTC so that two machines agree on the day. */
const today = (): string => new Date().toISOString().slice(0, 10);

function isCalendarDate(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(text) && new Date(`${text}T00:00:00Z`).toISOString().startsWith(text);
}

function parseInvocation(args: string[]): Invocation {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: { remote: { type: 'string' }, date: { type: 'string' }, root: { type: 'string' } },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const [release, version, ...extra] = parsed.positionals;
  if (release === undefined || version === undefined || extra.length > 0) throw new UsageError('expected a package and a version');
  if (PACKAGES[release] === undefined) throw new UsageError(`unknown package "${release}" (known: ${Object.keys(PACKAGES).join(', ')})`);
  if (!parseSemVer(version)) {
    const hint = version.startsWith('v') ? ' (write it without the leading "v")' : '';
    throw new UsageError(`"${version}" is not a semantic version X.Y.Z${hint}`);
  }
  const date = parsed.values.date ?? today();
  if (!isCalendarDate(date)) throw new UsageError(`--date "${date}" is not a YYYY-MM-DD date`);
  const root = parsed.values.root ?? process.env.MADA_REPO_ROOT ?? process.cwd();
  const remote = parsed.values.remote;
  return { release, version, root, date, ...(remote !== undefined ? { remote } : {}) };
}

function release(invocation: Invocation): void {
  const root = new Git(invocation.root).tryRun('rev-parse', '--show-toplevel');
  if (root === undefined) throw new ReleaseRefusal(`${invocation.root} is not inside a git work tree`);
  const git = new Git(root);
  const plan = planRelease(git, root, invocation);
  const commit = commitRelease(git, root, plan);
  verifyReleaseCommit(git, plan, commit);
  console.error(`committed ${commit.slice(0, 12)} ${plan.message} (${plan.packageName} ${plan.previous} -> ${plan.version})`);
  tagRelease(git, plan, commit);
  console.error(`tagged ${plan.tag} on ${commit.slice(0, 12)}; nothing is pushed yet. Push the commit and the tag together:`);
  console.log(`git push --atomic ${plan.remote} ${plan.branch} ${plan.tag}`);
}

try {
  release(parseInvocation(process.argv.slice(2)));
} catch (error) {
  if (error instanceof UsageError) {
    console.error(`release: ${error.message}\n${USAGE}`);
    process.exitCode = 2;
  } else if (error instanceof ReleaseRefusal || error instanceof ReleaseFailure || error instanceof GitError) {
    console.error(`release: ${error.message}`);
    process.exitCode = 1;
  } else {
    throw error;
  }
}
