import type { MessageRecord } from '../db/repository.js';

const section = (tag: string, body: string): string => `<${tag}>\n${body}\n</${tag}>`;

export const formatLine = (message: Pick<MessageRecord, 'role' | 'content'>): string => `${message.role.toUpperCase()}: ${message.content}`;

/**
 * The prompt an agent receives for one conversation turn (docs/api.md, "Context prompt"):
 * the latest summary, the recent non-summary messages before the new one, then the request.
 * Sections are separated by a blank line; each tag sits on its own line.
 */
export function buildContextPrompt(summary: MessageRecord | undefined, recent: readonly MessageRecord[], request: string): string {
  const sections: string[] = [];
  if (summary) sections.push(section('conversation_summary', summary.content));
  if (recent.length > 0) sections.push(section('recent_conversation', recent.map(formatLine).join('\n')));
  sections.push(section('current_request', request));
  return sections.join('\n\n');
}
