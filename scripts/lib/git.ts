import { execFileSync } from 'node:child_process';

export class GitError extends Error {}

/** Runs git in one repository; failures carry git's own message. */
export class Git {
  constructor(readonly cwd: string) {}

  run(...args: string[]): string {
    try {
      return execFileSync('git', args, { cwd: this.cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trimEnd();
    } catch (error) {
      // A git that ran says why on stderr; one that could not start (no git, no directory) does not.
      const reason = (error as { stderr?: string }).stderr?.trim() || (error as Error).message;
      throw new GitError(`git ${args.join(' ')} failed: ${reason}`);
    }
  }

  /** For questions whose "no" is a non-zero exit (does this ref exist?). */
  tryRun(...args: string[]): string | undefined {
    try {
      return this.run(...args);
    } catch {
      return undefined;
    }
  }

  /** Staged, unstaged and untracked changes, as `git status` would list them. */
  changes(): string[] {
    return this.run('status', '--porcelain=v1', '--untracked-files=all').split('\n').filter((line) => line !== '');
  }

  currentBranch(): string | undefined {
    return this.tryRun('symbolic-ref', '--quiet', '--short', 'HEAD');
  }

  head(): string | undefined {
    return this.tryRun('rev-parse', '--verify', '--quiet', 'HEAD^{commit}');
  }

  tagExists(tag: string): boolean {
    return this.tryRun('rev-parse', '--verify', '--quiet', `refs/tags/${tag}`) !== undefined;
  }
}
