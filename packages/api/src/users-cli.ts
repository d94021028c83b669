/**
 * Users and keys from the command line, with the service stopped or running (it reads the same
 * database the service does, through the same settings):
 *
 *   npm run users -- add <id> [--admin] [--key-name NAME] [--workspace PATH]...
 *                                                           a stored user and its first key
 *   npm run users -- key <id> [--key-name NAME]             another key for a stored user
 *
 * The key is printed once, on stdout alone (so `KEY=$(npm run -s users -- add alice --admin)`
 * works); what else there is to say goes to stderr. Exit status: 0 done, 1 refused (the user
 * exists, or does not), 2 usage or settings.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { UserId } from '@mada/protocol';
import { config as loadDotenv } from 'dotenv';
import { SYSTEM_ACTOR } from './db/audit-repository.js';
import { openRepository } from './db/open.js';
import { DomainError } from './errors.js';
import { loadSettings } from './settings.js';
import { StoredKeyCache } from './users/key-cache.js';
import { UserDirectory } from './users/user-directory.js';
import { openWorkspaces } from './users/workspace-paths.js';
import { errorMessage } from './util/error-message.js';

const USAGE = `usage: npm run users -- add <id> [--admin] [--key-name <name>] [--workspace <path>]...
       npm run users -- key <id> [--key-name <name>]`;

class UsageError extends Error {}

/** What the command prints: a key (stdout) with a note (stderr), or the usage asked for. */
type Outcome = { key: string; note: string } | { usage: string };

async function main(args: string[]): Promise<Outcome> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      admin: { type: 'boolean', default: false },
      'key-name': { type: 'string', default: 'cli' },
      // The user's workspace paths (relative ones from here); none: WORKSPACES_DIR/<id> or ALLOWED_PATHS.
      workspace: { type: 'string', multiple: true, default: [] },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return { usage: USAGE };
  const [command, id, ...rest] = positionals;
  if ((command !== 'add' && command !== 'key') || id === undefined || rest.length > 0) throw new UsageError('expected add or key, then one user id');
  if (!UserId.safeParse(id).success) throw new UsageError(`invalid user id "${id}": 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit`);
  const keyName = values['key-name'].trim();
  if (keyName === '' || keyName.length > 100) throw new UsageError('--key-name: 1 to 100 characters');
  if (command !== 'add' && values.workspace.length > 0) throw new UsageError('--workspace goes with add');
  const workspacePaths = values.workspace.map((path) => resolve(path));
  loadDotenv({ quiet: true });
  const settings = loadSettings(process.env, process.cwd());
  const repository = await openRepository(settings.database);
  try {
    const users = new UserDirectory({
      store: repository.users,
      keys: new StoredKeyCache(repository.users, () => undefined),
      configuredUsers: [...new Set(settings.apiKeys.map((key) => key.userId))],
      adminUsers: settings.adminUsers,
      // Keys are what this command is for, whatever mode a running service is in.
      keyed: true,
      workspaces: await openWorkspaces(settings),
      now: () => new Date(),
    });
    if (command === 'add') {
      const { key } = await users.create(SYSTEM_ACTOR, { id, role: values.admin ? 'admin' : 'member', workspacePaths }, keyName);
      return { key: key!, note: `user ${id} created (${values.admin ? 'admin' : 'member'}). The key below is shown once; a service running in local mode asks for keys after its next start.` };
    }
    const { key } = await users.createKey(SYSTEM_ACTOR, id, keyName);
    return { key, note: `new key for ${id}, shown once:` };
  } finally {
    await repository.close();
  }
}

main(process.argv.slice(2)).then(
  (outcome) => {
    if ('usage' in outcome) {
      process.stdout.write(`${outcome.usage}\n`);
      return;
    }
    process.stderr.write(`${outcome.note}\n`);
    process.stdout.write(`${outcome.key}\n`);
  },
  (error: unknown) => {
    // parseArgs throws a TypeError with a code for an unknown or malformed option.
    const usage = error instanceof UsageError || (error instanceof TypeError && 'code' in error);
    process.stderr.write(`users: ${errorMessage(error)}\n${usage ? `${USAGE}\n` : ''}`);
    process.exitCode = error instanceof DomainError ? 1 : 2;
  },
);
