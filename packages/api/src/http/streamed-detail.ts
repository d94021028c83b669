import { Readable } from 'node:stream';
import type { ConversationResponse } from '@mada/protocol';
import type { OutgoingMessage } from '../conversations/service.js';
import { TimeSlice } from '../util/time-slice.js';

/*
 * Bodies holding messages, written as the messages are read: the same bytes Fastify's serializer
 * gives for their schemas (fields in schema order), but a long conversation read by several
 * clients is never held whole in memory, and a large message's content is escaped a slice at a
 * time, never on the event loop all at once. Each stream pulls more only as the client drains what
 * was sent, and gives other requests the event loop every few milliseconds: a stream pulls through
 * promises alone, and while a fast client kept draining, one reader of a 60 MiB history held the
 * loop for seconds at a time. (A turn at every page and slice instead let six readers interleave so
 * finely that their pages outlived young-generation collections: twice the memory.)
 */

/** ConversationDetailResponse: the conversation's fields, then every message of `pages`. */
export function streamedDetail(head: ConversationResponse, pages: AsyncIterable<OutgoingMessage[]>): Readable {
  return Readable.from(detailChunks(head, pages), { objectMode: false });
}

/** MessagePageResponse: `{"messages": [...], "has_more": <bool>}`. */
export function streamedPage(messages: readonly OutgoingMessage[], hasMore: boolean): Readable {
  return Readable.from(pageChunks(messages, hasMore), { objectMode: false });
}

async function* detailChunks(head: ConversationResponse, pages: AsyncIterable<OutgoingMessage[]>): AsyncGenerator<string> {
  // The head's last character is its closing brace; the messages go in its place.
  yield `${JSON.stringify(head).slice(0, -1)},"messages":[`;
  let separator = '';
  const slice = new TimeSlice();
  for await (const page of pages) {
    if (slice.due()) await slice.pause();
    for (const message of page) {
      yield separator;
      yield* messageChunks(message, slice);
      separator = ',';
    }
  }
  yield ']}';
}

async function* pageChunks(messages: readonly OutgoingMessage[], hasMore: boolean): AsyncGenerator<string> {
  yield '{"messages":[';
  for (const [i, message] of messages.entries()) {
    if (i > 0) yield ',';
    yield* messageChunks(message);
  }
  yield `],"has_more":${hasMore}}`;
}

/** One MessageResponse: id, role, content, token_count, is_summary, created_at. */
async function* messageChunks({ fields, content }: OutgoingMessage, slice = new TimeSlice()): AsyncGenerator<string> {
  const { id, role, ...rest } = fields;
  const tail = `,${JSON.stringify(rest).slice(1)}`;
  const start = `${JSON.stringify({ id, role }).slice(0, -1)},"content":`;
  yield `${start}"`;
  if (typeof content === 'string') yield escaped(content);
  else {
    // Slices end on whole characters, and JSON escapes each character on its own: the pieces join
    // into the escape of the whole content.
    for await (const piece of content) {
      yield escaped(piece);
      if (slice.due()) await slice.pause();
    }
  }
  yield `"${tail}`;
}

/** Characters JSON.stringify writes as escapes; lone surrogates are checked apart. */
// eslint-disable-next-line no-control-regex -- the control characters are what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

/**
 * Text as it stands between the quotes of a JSON string. Most content needs no escape and is sent
 * as it is: no copy of each message is made, so six readers of a long history do not fill the heap
 * with copies that outlive a collection.
 */
function escaped(text: string): string {
  return NEEDS_ESCAPE.test(text) || !text.isWellFormed() ? JSON.stringify(text).slice(1, -1) : text;
}
