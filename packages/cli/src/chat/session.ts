import type { PermissionMode } from '@mada/protocol';

/** How turns reach the service; `agent-stream` is the fallback for services without streamed turns. */
export type Transport = 'turn-stream' | 'agent-stream' | 'messages';

/** What the chat knows about the conversation it is in. */
export interface ChatSession {
  conversationId: string;
  agentType: string;
  workingDir: string;
  mode: PermissionMode;
  transport: Transport;
}
