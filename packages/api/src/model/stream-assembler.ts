import { AnswerText } from './answer-text.js';
import { ModelError } from './errors.js';
import { toFinishReason, toModelToolCall, toUsage, type SdkStreamPart } from './sdk-convert.js';
import type { ModelStreamPart, ModelToolCall } from './types.js';

/**
 * Turns the SDK's stream parts into ours and collects the whole response for the `finish` part.
 * Throws the error of an `error` part, for the client to map.
 */
export class StreamAssembler {
  private readonly text = new AnswerText();
  private readonly toolCalls: ModelToolCall[] = [];

  /** The part to hand to the consumer, or undefined for bookkeeping parts (starts, metadata). */
  accept(part: SdkStreamPart): ModelStreamPart | undefined {
    switch (part.type) {
      case 'text-delta':
        if (part.delta === '') return undefined;
        this.text.add(part.delta);
        return { type: 'text', text: part.delta };
      case 'tool-call': {
        const call = toModelToolCall(part);
        this.toolCalls.push(call);
        return { type: 'tool-call', call };
      }
      case 'error':
        throw part.error;
      case 'finish':
        // The Ollama provider ends a stream that lost its final `done` line (a dropped
        // connection, an error line it could not parse) with an unnamed reason instead of failing.
        if (part.finishReason.raw === undefined && part.finishReason.unified === 'other') {
          throw new ModelError('interrupted', 'The model runtime ended the stream without finishing the answer (see its log for an error)');
        }
        return {
          type: 'finish',
          response: { text: this.text.toString(), toolCalls: [...this.toolCalls], finishReason: toFinishReason(part.finishReason), usage: toUsage(part.usage) },
        };
      default:
        return undefined;
    }
  }
}
