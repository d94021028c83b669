import type { ConversationResponse } from '@mada/protocol';
import { resolveSettings } from '../config/resolve.js';
import { EXIT_OK } from '../errors.js';
import { clip, printTable, uniqueShortIds, when } from '../ui/table.js';
import type { Terminal } from '../ui/terminal.js';
import { apiFlag, clientFor, type ServiceFlags } from './service.js';

export interface SessionsFlags extends ServiceFlags {
  json?: boolean;
  limit: number;
}

function row(conversation: ConversationResponse, id: string): string[] {
  const title = conversation.title ?? '(untitled)';
  return [
    id,
    conversation.agent_type,
    when(conversation.updated_at ?? conversation.created_at),
    String(conversation.total_tokens),
    clip(title, 200),
  ];
}

/** `mada sessions`: the caller's stored conversations, most recently active first. */
export async function sessionsCommand(flags: SessionsFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(apiFlag(flags));
  const list = await clientFor(values).listConversations(flags.limit);
  if (flags.json) {
    terminal.printJson(list);
    return EXIT_OK;
  }
  if (list.conversations.length === 0) {
    terminal.print('No sessions yet. Start one with: mada chat');
    return EXIT_OK;
  }
  const ids = uniqueShortIds(list.conversations.map((conversation) => conversation.id));
  printTable([['ID', 'AGENT', 'UPDATED', 'TOKENS', 'TITLE'], ...list.conversations.map((conversation, index) => row(conversation, ids[index]!))], terminal, new Set([3]), true);
  terminal.print(terminal.style('dim', `${list.conversations.length} of ${list.total} · resume one with: mada chat --resume <id>`));
  return EXIT_OK;
}
