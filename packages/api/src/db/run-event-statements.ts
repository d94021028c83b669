import type { Statement } from './dialect.js';

/*
 * The reads of a replay, written out per dialect: a page of events joined into SSE frames by the
 * database (one string instead of an object per event), and an ended run's stored pages.
 */

/**
 * A page of events as Server-Sent Events frames, joined in the database: replay then allocates one
 * string per page instead of an object per event. Stored data never holds a line break (it is
 * compact JSON), so each frame's `data:` line is the event's whole text. The blank line that ends
 * each frame is the aggregate's separator (and added after the last): one concatenation fewer per
 * event, which is most of the cost of a replay. The line breaks are written into the literals.
 *
 * Both aggregates name their order: SQLite does not promise to keep the subquery's, and a replay
 * out of order would break the exact-replay contract (the ORDER BY costs about a third of the
 * query; ended long runs are replayed from stored pages instead).
 */
const framesStatement = (name: string, frames: { sqlite: string; postgres: string }): Statement => ({
  name,
  sqlite: `select ${frames.sqlite} as text, max(seq) as last_seq from (select seq, data from run_events where run_id = ? and seq > ? order by seq limit ?)`,
  postgres: `select ${frames.postgres} as text, max(seq) as last_seq from (select seq, data from run_events where run_id = $1 and seq > $2 order by seq limit $3) page`,
});

export const framesWithIds = framesStatement('mada_run_frames_with_ids', {
  sqlite: `group_concat('id: ' || seq || '\ndata: ' || data, '\n\n' order by seq) || '\n\n'`,
  postgres: `string_agg('id: ' || seq || '\ndata: ' || data, '\n\n' order by seq) || '\n\n'`,
});

export const framesWithoutIds = framesStatement('mada_run_frames', {
  sqlite: `'data: ' || group_concat(data, '\n\ndata: ' order by seq) || '\n\n'`,
  postgres: `'data: ' || string_agg(data, '\n\ndata: ' order by seq) || '\n\n'`,
});

/**
 * Stored pages of an ended run from the one that holds the event after `$2`, at most `$3`. Pages
 * are contiguous and ordered by first_seq. SQLite gives their bytes, PostgreSQL their text.
 */
export const pagesAfter: Statement = {
  name: 'mada_run_pages_after',
  // SQLite hands a text cast to a blob over as its UTF-8 bytes (a Buffer), undecoded.
  sqlite: 'select first_seq, last_seq, cast(frames as blob) as frames from run_event_pages where run_id = ? and last_seq > ? order by first_seq limit ?',
  postgres: 'select first_seq, last_seq, frames from run_event_pages where run_id = $1 and last_seq > $2 order by first_seq limit $3',
};


/*
 * Sizes first: a replay reads how large the next events (or stored pages) are before reading
 * them, so a large one is never built into a row on the event loop. octet_length reads neither
 * SQLite's overflow pages nor PostgreSQL's TOAST.
 */

/** Seq and size in bytes of each event after `$2`, at most `$3`. */
export const eventSizesAfter: Statement = {
  name: 'mada_run_event_sizes',
  sqlite: 'select seq, octet_length(data) as bytes from run_events where run_id = ? and seq > ? order by seq limit ?',
  postgres: 'select seq, octet_length(data) as bytes from run_events where run_id = $1 and seq > $2 order by seq limit $3',
};

/** Bounds and size in bytes of each stored page from the one holding the event after `$2`, at most `$3`. */
export const pageSizesAfter: Statement = {
  name: 'mada_run_page_sizes',
  sqlite: 'select first_seq, last_seq, octet_length(frames) as bytes from run_event_pages where run_id = ? and last_seq > ? order by first_seq limit ?',
  postgres: 'select first_seq, last_seq, octet_length(frames) as bytes from run_event_pages where run_id = $1 and last_seq > $2 order by first_seq limit $3',
};
