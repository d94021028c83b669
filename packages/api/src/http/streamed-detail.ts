import { Readable } from 'node:stream';
import type { ConversationResponse, MessageResponse } from '@mada/protocol';

/**
 * The conversation detail body, written as its messages are read: the same bytes Fastify's
 * serializer gives for ConversationDetailResponse (fields in schema order, messages last), but a
 * long conversation read by several clients is never held whole in memory. The stream pulls the
 * next page only as the client drains what was sent.
 */
export function streamedDetail(head: ConversationResponse, pages: AsyncIterable<MessageResponse[]>): Readable {
  return Readable.from(detailChunks(head, pages), { objectMode: false });
}

async function* detailChunks(head: ConversationResponse, pages: AsyncIterable<MessageResponse[]>): AsyncGenerator<string> {
  // The head's last character is its closing brace; the messages go in its place.
  yield `${JSON.stringify(head).slice(0, -1)},"messages":[`;
  let separator = '';
  for await (const page of pages) {
    for (const message of page) {
      yield separator + JSON.stringify(message);
      separator = ',';
    }
  }
  yield ']}';
}
