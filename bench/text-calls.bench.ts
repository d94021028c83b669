import { AnswerText } from '../packages/api/src/model/answer-text.js';
import { extractTextToolCalls, StreamGate } from '../packages/api/src/model/index.js';
import { prose, tokensOf } from './answers.js';
import { interleavedMediansMs, medianMs, overhead, result, type Bench, type BenchResult } from './harness.js';

const TOOLS = ['read_file', 'glob_files', 'grep_content', 'bash_readonly', 'edit_file', 'write_file', 'bash', 'web_search', 'spawn_agent'];

/**
 * What a streamed answer costs the server: the stream assembler keeps the text whole for the
 * finish part (AnswerText), the agent loop passes each chunk through the gate, then scans the
 * whole text for calls once. The chunks are read by index: a `for...of` loop here stands for the
 * model stream, not for work of the server, and in some processes V8 deoptimised its iterator
 * handling after the loop ("insufficient type feedback") and kept it so for the run, allocating an
 * iterator result per token (4.8 MB per answer became 9.9 MB) and slowing the streamed side alone.
 */
function consume(chunks: readonly string[]): number {
  const gate = new StreamGate();
  const text = new AnswerText();
  let sent = 0;
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i]!;
    text.add(chunk);
    sent += gate.push(chunk).length;
  }
  const found = extractTextToolCalls(text.toString(), TOOLS);
  return sent + gate.finish().length + found.calls.length;
}

/**
 * The same body as `consume`, for the one-chunk baseline alone: V8 optimises a function for the
 * inputs it has seen, and one function fed one 512 KB chunk and 131,072 small ones was
 * deoptimised and recompiled back and forth (wrong map, not a Smi). Two copies give each side its
 * own feedback; both run the same production gate, text and scan.
 */
function consumeWhole(chunks: readonly string[]): number {
  const gate = new StreamGate();
  const text = new AnswerText();
  let sent = 0;
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i]!;
    text.add(chunk);
    sent += gate.push(chunk).length;
  }
  const found = extractTextToolCalls(text.toString(), TOOLS);
  return sent + gate.finish().length + found.calls.length;
}

/**
 * The figure. Its floor is the per-token work any stream has (an array push per token
 * alone is several times the one-chunk scan), so the linearity figure below is the one that
 * tells a linear scan from a rescan of the whole text per chunk (which would be about 4).
 */
async function streamingScan(): Promise<BenchResult[]> {
  const answer = prose(512 * 1024);
  const quarter = tokensOf(answer.slice(0, answer.length / 4));
  const tokens = tokensOf(answer);
  // Whole calls on a short answer first. Otherwise the first long call is compiled mid-loop
  // (on-stack replacement) before the code after its loop has ever run: V8 kept that code, left
  // it at the same point in every later call, and the streamed side ran about 1.5 times slower in
  // some processes (4 of 10 in a probe of the gate alone), the bench measuring V8's tiering.
  const short = answer.slice(0, 4096);
  const shortTokens = tokensOf(short);
  for (let i = 0; i < 200; i++) {
    consumeWhole([short]);
    consume(shortTokens);
  }
  // In turns, so that both see the same load: the one-chunk baseline is short enough that a
  // second of other work on the machine would otherwise decide the ratio.
  const { baselineMs: whole, subjectMs: streamed } = await interleavedMediansMs(() => consumeWhole([answer]), () => consume(tokens), 21, 5);
  const quarterMs = await medianMs(() => consume(quarter), 9, 2);
  return [
    result('streamed text scan: 512 KB answer in 4-byte tokens', 'the same answer in one chunk', whole, streamed, 3),
    result('streamed text scan linearity: 512 KB in 4-byte tokens', '4 x a 128 KB answer in 4-byte tokens', 4 * quarterMs, streamed, 1.5),
  ];
}

async function parserCost(): Promise<BenchResult> {
  const args = { file_path: '/srv/app/src/routes/users.ts', offset: 0, limit: 200 };
  const call = JSON.stringify({ name: 'read_file', arguments: args });
  const answer = `${prose(4096 - call.length - 40)}\n<tool_call>\n${call}\n</tool_call>`;
  const reps = 200;
  const plain = await medianMs(() => {
    for (let i = 0; i < reps; i++) JSON.parse(call);
  });
  const parsed = await medianMs(() => {
    for (let i = 0; i < reps; i++) extractTextToolCalls(answer, TOOLS);
  });
  return overhead('text tool-call parser on a 4 KB answer holding one call', 'JSON.parse of the call alone', plain, parsed, reps, 1, 'ms per answer beyond JSON.parse');
}

const bench: Bench = async () => [...(await streamingScan()), await parserCost()];
export default bench;
