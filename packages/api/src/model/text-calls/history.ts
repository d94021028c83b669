import type { ChatMessage, ToolDefinition } from '../types.js';

/** How a call is shown to a model that writes its calls as text: the form its prompt asks for. */
export const renderTextCall = (call: { name: string; arguments: unknown }): string =>
  `<tool_call>${JSON.stringify({ name: call.name, arguments: call.arguments })}</tool_call>`;

/**
 * The history as a model without native tool calls can read it: its own calls back in the text
 * form it was asked to write, each result as a user message naming the tool.
 */
export function toTextToolHistory(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message): ChatMessage => {
    if (message.role === 'assistant' && (message.toolCalls?.length ?? 0) > 0) {
      const calls = message.toolCalls!.map(renderTextCall).join('\n');
      return { role: 'assistant', content: message.content === '' ? calls : `${message.content}\n${calls}` };
    }
    if (message.role === 'tool') return { role: 'user', content: `[Result of ${message.toolName}]\n${message.content}` };
    return message;
  });
}

/** The tools, described for the system prompt of a model that writes its calls as text. */
export function describeToolsAsText(tools: readonly ToolDefinition[]): string {
  const lines = tools.map((tool) => {
    const { $schema: _ignored, ...schema } = tool.parameters;
    return `- ${tool.name}: ${tool.description}\n  arguments: ${JSON.stringify(schema)}`;
  });
  return [
    'Tools: to call one, write the call on its own line in exactly this form, then stop and wait for its result:',
    renderTextCall({ name: 'TOOL_NAME', arguments: { ARGUMENT: 'VALUE' } }),
    'Several calls may follow one another. Each result comes back in a message starting with [Result of TOOL_NAME].',
    'When you have what you need, write your final answer with no tool call in it.',
    '',
    'Available tools:',
    ...lines,
  ].join('\n');
}
