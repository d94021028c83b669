import type { ApiClient } from '../api/client.js';
import { CliError, UsageError } from '../errors.js';
import { safeText } from '../ui/safe-text.js';

/** The shortest prefix taken: 8 hex digits, the first group of a UUID, rarely shared by two ids. */
export const MIN_PREFIX = 8;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What the ids name, for the messages: `run`, `runs`, and the command that lists them. */
export interface IdKind {
  noun: string;
  plural: string;
  lister: string;
}

export const RUN_IDS: IdKind = { noun: 'run', plural: 'runs', lister: 'mada runs' };
export const APPROVAL_IDS: IdKind = { noun: 'approval', plural: 'approvals', lister: 'mada approvals' };
export const KEY_IDS: IdKind = { noun: 'key', plural: 'keys', lister: 'mada keys' };
export const WEBHOOK_IDS: IdKind = { noun: 'webhook', plural: 'webhooks', lister: 'mada webhooks' };
export const SESSION_IDS: IdKind = { noun: 'session', plural: 'sessions', lister: 'mada sessions' };

/** How many matches an ambiguous prefix names before it says "and N more". */
const SHOWN = 5;

/**
 * The whole id `given` stands for. A whole UUID is passed on untouched (the service answers for
 * it); a shorter one must have at least MIN_PREFIX characters and start exactly one of the ids
 * `pages` yields, page after page, case-insensitively.
 */
export async function resolveId(given: string, kind: IdKind, pages: () => AsyncIterable<readonly string[]>): Promise<string> {
  const prefix = given.trim().toLowerCase();
  if (UUID.test(prefix)) return prefix;
  const shown = safeText(given);
  if (prefix.length < MIN_PREFIX) {
    throw new UsageError(`${shown} is too short for a ${kind.noun} id`, `give at least ${MIN_PREFIX} characters of it (\`${kind.lister}\` lists them)`);
  }
  const matches = new Set<string>();
  // An id with a character no UUID has cannot match anything: no need to ask the service.
  if (/^[0-9a-f-]+$/.test(prefix)) {
    for await (const ids of pages()) for (const id of ids) if (id.toLowerCase().startsWith(prefix)) matches.add(id);
  }
  const [only, ...others] = [...matches];
  if (only === undefined) throw new CliError(`No ${kind.noun} of yours has an id starting with ${shown}`, `\`${kind.lister}\` lists them`);
  if (others.length > 0) {
    const named = [only, ...others].slice(0, SHOWN).join(', ');
    const more = matches.size > SHOWN ? ` and ${matches.size - SHOWN} more` : '';
    throw new CliError(`${shown} starts ${matches.size} ${kind.plural}: ${named}${more}`, 'type more of the id to pick one');
  }
  return only;
}

/**
 * Pages of a list route read `size` at a time until `total` is reached (or a page comes back
 * short, if the list shrank meanwhile).
 */
export async function* pagesOf(size: number, page: (offset: number) => Promise<{ ids: string[]; total: number }>): AsyncGenerator<string[]> {
  for (let offset = 0; ; offset += size) {
    const { ids, total } = await page(offset);
    yield ids;
    if (ids.length < size || offset + ids.length >= total) return;
  }
}

/** The list routes take at most 100 a page. */
const PAGE = 100;

export function resolveRunId(client: ApiClient, given: string): Promise<string> {
  return resolveId(given, RUN_IDS, () =>
    pagesOf(PAGE, async (offset) => {
      const list = await client.listRuns(PAGE, undefined, offset);
      return { ids: list.runs.map((run) => run.id), total: list.total };
    }),
  );
}

export function resolveSessionId(client: ApiClient, given: string): Promise<string> {
  return resolveId(given, SESSION_IDS, () =>
    pagesOf(PAGE, async (offset) => {
      const list = await client.listConversations(PAGE, offset);
      return { ids: list.conversations.map((conversation) => conversation.id), total: list.total };
    }),
  );
}

/** The waiting ones first: the route lists at most the newest 100 of all, and those are what approve and deny are for. */
export function resolveApprovalId(client: ApiClient, given: string): Promise<string> {
  return resolveId(given, APPROVAL_IDS, async function* () {
    yield (await client.listApprovals('pending')).approvals.map((approval) => approval.id);
    yield (await client.listApprovals()).approvals.map((approval) => approval.id);
  });
}

export function resolveKeyId(client: ApiClient, given: string): Promise<string> {
  return resolveId(given, KEY_IDS, async function* () {
    yield (await client.listKeys()).keys.map((key) => key.id);
  });
}

export function resolveWebhookId(client: ApiClient, given: string): Promise<string> {
  return resolveId(given, WEBHOOK_IDS, async function* () {
    yield (await client.listWebhooks()).webhooks.map((webhook) => webhook.id);
  });
}
