import type { PermissionMode } from '@mada/protocol';

/**
 * How turns reach the service: `runs` (stored runs and their replayable events) first; services
 * without them fall back to `turn-stream`, and those without streamed turns to `agent-stream`.
 * `messages` is the choice without streaming.
 */
export type Transport = 'runs' | 'turn-stream' | 'agent-stream' | 'messages';

/** What the chat knows about the conversation it is in. */
export interface ChatSession {
  conversationId: string;
  agentType: string;
  workingDir: string;
  mode: PermissionMode;
  /** The model turns name (`--model`, `model <name>`); absent: the conversation's own. */
  model?: string | undefined;
  transport: Transport;
  /** The stored run of the latest turn started over `runs` (what /diff and /undo act on). */
  lastRunId?: string | undefined;
}
