import type { KeyResponse } from '@mada/protocol';
import { resolveSettings } from '../config/resolve.js';
import { EXIT_OK } from '../errors.js';
import { ago, clip, day, printTable, uniqueShortIds } from '../ui/table.js';
import type { Terminal } from '../ui/terminal.js';
import { resolveKeyId } from './id-prefix.js';
import { apiFlag, clientFor, type ServiceFlags } from './service.js';

export interface KeysFlags extends ServiceFlags {
  json?: boolean;
}

export interface CreateKeyFlags extends ServiceFlags {
  expiresInDays?: number;
}

const limit = (n: number): string => (n === 0 ? 'no limit' : `at most ${n}`);

/** `mada whoami`: the user the key acts as, their role, workspace, quotas and today's usage. */
export async function whoamiCommand(flags: KeysFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(apiFlag(flags));
  const me = await clientFor(values).me();
  if (flags.json) {
    terminal.printJson(me);
    return EXIT_OK;
  }
  terminal.print(`${terminal.style('bold', clip(me.id, 64))} (${me.role})`);
  terminal.print(`workspace: ${me.workspace.paths.map((path) => clip(path, 200)).join(', ')}`);
  const { usage, quotas } = me;
  terminal.print(`today (UTC): ${usage.runs_today} runs, ${usage.tokens_today} tokens; running now: ${usage.running}`);
  for (const used of usage.by_model) terminal.print(`  ${used.model === null ? '(before models were counted)' : clip(used.model, 64)}: ${used.runs} runs, ${used.tokens} tokens`);
  terminal.print(
    terminal.style(
      'dim',
      `quotas: runs a day ${limit(quotas.max_runs_per_day)}; tokens a day ${limit(quotas.max_tokens_per_day)}; runs at once ${limit(quotas.max_concurrent_runs)}`,
    ),
  );
  return EXIT_OK;
}

const stateOf = (key: KeyResponse, now: number): string => {
  if (key.revoked_at !== null) return 'revoked';
  if (key.expires_at !== null && Date.parse(key.expires_at) <= now) return 'expired';
  return 'active';
};

/** `mada keys`: the caller's stored keys, newest first. */
export async function keysCommand(flags: KeysFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(apiFlag(flags));
  const { keys } = await clientFor(values).listKeys();
  if (flags.json) {
    terminal.printJson({ keys });
    return EXIT_OK;
  }
  if (keys.length === 0) {
    terminal.print('No stored keys. Make one with: mada keys create <name>');
    return EXIT_OK;
  }
  const now = Date.now();
  const ids = uniqueShortIds(keys.map((key) => key.id));
  // At most 80 columns: 8 (id), 12 (name), 12 (prefix), 7, 10, 10, 9 and the gaps; `--json` has
  // the whole name and the times to the millisecond.
  const rows = keys.map((key, index) => [
    ids[index]!,
    clip(key.name, 12),
    key.prefix,
    stateOf(key, now),
    day(key.created_at),
    key.expires_at === null ? '-' : day(key.expires_at),
    key.last_used_at === null ? 'never' : ago(key.last_used_at, now),
  ]);
  printTable([['ID', 'NAME', 'PREFIX', 'STATE', 'CREATED', 'EXPIRES', 'LAST USED'], ...rows], terminal);
  return EXIT_OK;
}

/** `mada keys create <name>`: prints the new key once; the service keeps only its digest. */
export async function createKeyCommand(name: string, flags: CreateKeyFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(apiFlag(flags));
  const created = await clientFor(values).createKey(name, flags.expiresInDays);
  terminal.print(created.key);
  terminal.print(terminal.style('dim', `key ${created.id} (${clip(created.name, 40)}): shown this once, store it now`));
  return EXIT_OK;
}

/** `mada keys revoke <id>`: the key is refused from then on. */
export async function revokeKeyCommand(id: string, flags: ServiceFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(apiFlag(flags));
  const client = clientFor(values);
  const keyId = await resolveKeyId(client, id);
  await client.revokeKey(keyId);
  terminal.print(`Key ${keyId} revoked.`);
  return EXIT_OK;
}
