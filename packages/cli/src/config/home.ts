import { homedir } from 'node:os';
import { join } from 'node:path';

/** The user's home: `HOME` first, so tests (and users) can point the client at another one. */
export function homeDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.HOME && env.HOME !== '' ? env.HOME : homedir();
}

/** Expands a leading `~` or `~/` the way a shell would. */
export function expandHome(path: string, env: NodeJS.ProcessEnv = process.env): string {
  if (path === '~') return homeDir(env);
  if (path.startsWith('~/')) return join(homeDir(env), path.slice(2));
  return path;
}

/** Shows paths under the home directory with `~`, as users write them. */
export function tildify(path: string, env: NodeJS.ProcessEnv = process.env): string {
  const home = homeDir(env);
  if (path === home) return '~';
  return path.startsWith(`${home}/`) ? `~/${path.slice(home.length + 1)}` : path;
}

export function configFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(homeDir(env), '.mada', 'config.toml');
}
