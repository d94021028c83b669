import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cutText } from '../tools/text.js';

/** What one MCP tool result may give the model, as the shell tools' output (EXTENSIONS.md section 1). */
export const MAX_RESULT_CHARS = 50_000;

type Content = CallToolResult['content'][number];

/** Approximate bytes of base64 data, for naming what was not shown. */
const base64Bytes = (data: string): number => Math.floor((data.length * 3) / 4);

/** One content item as text: text as it is, every other kind named (never dropped silently). */
function contentText(item: Content): string {
  switch (item.type) {
    case 'text':
      return item.text;
    case 'image':
    case 'audio':
      return `[${item.type} content (${item.mimeType}, ${base64Bytes(item.data)} bytes), not shown]`;
    case 'resource_link':
      return `[resource link: ${item.uri}${item.name ? ` (${item.name})` : ''}]`;
    case 'resource': {
      const { resource } = item;
      if ('text' in resource && typeof resource.text === 'string') return `[resource ${resource.uri}]\n${resource.text}`;
      return `[resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}: binary content, not shown]`;
    }
    default:
      return `[${String((item as { type?: unknown }).type)} content, not shown]`;
  }
}

/** The text the model reads of a tool result: its content, else its structured content as JSON; at most MAX_RESULT_CHARS. */
export function resultText(result: CallToolResult): string {
  const parts = result.content.map(contentText);
  const whole = parts.length > 0 ? parts.join('\n') : result.structuredContent === undefined ? '' : JSON.stringify(result.structuredContent);
  const { text, cut } = cutText(whole, MAX_RESULT_CHARS);
  return cut ? `${text}\n[result cut at ${MAX_RESULT_CHARS.toLocaleString('en-US')} characters]` : text;
}
