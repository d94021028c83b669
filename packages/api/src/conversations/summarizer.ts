import type { MessageRecord } from '../db/repository.js';
import { formatLine } from './context-prompt.js';
import { countTokens } from '../tokens/count.js';

/** The instruction the `explore` agent gets with the messages to summarize. */
export const SUMMARY_INSTRUCTION = [
  'Summarize the following conversation between a user and a coding assistant.',
  'Write a concise, factual, technical summary of under 500 words.',
  'Keep every file path, function name, command and code reference that was mentioned, the decisions made and what is still open.',
  'Do not add anything that is not in the conversation.',
].join(' ');

/** What is summarized: the previous summary, if any, then the messages outside the recent window. */
export function summaryInputLines(previous: MessageRecord | undefined, messages: readonly MessageRecord[]): string[] {
  return [...(previous ? [`[Previous Summary]: ${previous.content}`] : []), ...messages.map(formatLine)];
}

export function summaryPrompt(lines: readonly string[]): string {
  return `${SUMMARY_INSTRUCTION}\n\n<conversation>\n${lines.join('\n')}\n</conversation>`;
}

/**
 * Used when generating a summary fails: 4 lines or fewer are kept as they are; otherwise the
 * first two and the last two, with a marker saying how many were left out.
 */
export function fallbackSummary(lines: readonly string[]): string {
  if (lines.length <= 4) return lines.join('\n');
  const omitted = lines.length - 4;
  return [...lines.slice(0, 2), `[... ${omitted} message${omitted === 1 ? '' : 's'} omitted ...]`, ...lines.slice(-2)].join('\n');
}

export interface SummarizationPolicy {
  /** MAX_CONTEXT_TOKENS; null: the window of the turn's model, as the runtime reports it. */
  maxContextTokens: number | null;
  summarizationThreshold: number;
  keepRecentMessages: number;
}

/**
 * docs/api.md, "Summarization": above the threshold (strictly), with more than keep_recent + 1 non-summary
 * messages, so at least one lies outside the recent window.
 */
export function needsSummary(totalTokens: number, activeMessages: number, policy: SummarizationPolicy, modelWindow: number): boolean {
  // A fixed 128,000 let a 32k model's conversation outgrow its window long before a summary.
  const window = policy.maxContextTokens ?? modelWindow;
  return totalTokens > window * policy.summarizationThreshold && activeMessages > policy.keepRecentMessages + 1;
}

/** Marks where a message too long for one summarization request was cut. */
const cutMarker = (omitted: number): string => `\n[... ${omitted} characters cut to fit the model's context window ...]\n`;

/** A line cut in the middle (head and tail kept) so that it counts at most `room` tokens. */
function cutLine(line: string, room: number): string {
  let keep = line.length;
  for (let tokens = countTokens(line); tokens > room && keep > 0; tokens = countTokens(cutMiddle(line, keep))) {
    keep = Math.floor((keep * room) / tokens * 0.9);
  }
  return cutMiddle(line, keep);
}

function cutMiddle(line: string, keep: number): string {
  if (keep >= line.length) return line;
  const head = Math.ceil(keep / 2);
  return `${line.slice(0, head)}${cutMarker(line.length - keep)}${line.slice(line.length - (keep - head))}`;
}

/** The summary prompts for `lines`, each within `room` tokens: consecutive lines grouped, over-long ones cut. */
export function summaryParts(lines: readonly string[], room: number): string[][] {
  const frame = countTokens(summaryPrompt([]));
  const lineRoom = Math.max(1, room - frame);
  const parts: string[][] = [];
  let current: string[] = [];
  let used = 0;
  for (const raw of lines) {
    const line = countTokens(raw) + 1 > lineRoom ? cutLine(raw, lineRoom - 1) : raw;
    const tokens = countTokens(line) + 1;
    if (current.length > 0 && used + tokens > lineRoom) {
      parts.push(current);
      current = [];
      used = 0;
    }
    current.push(line);
    used += tokens;
  }
  if (current.length > 0) parts.push(current);
  return parts;
}

/** Rounds of summarizing summaries before the input is simply cut. */
const MAX_ROUNDS = 3;

/**
 * Summarizes `lines` without ever asking for more than `room` tokens of prompt: input that fits
 * goes in one request; otherwise each part is summarized, then the parts' summaries are
 * summarized together the same way.
 */
export async function summarizeWithin(lines: readonly string[], room: number, summarize: (prompt: string) => Promise<string>): Promise<string> {
  let current = [...lines];
  for (let round = 1; ; round++) {
    const parts = summaryParts(current, room);
    // The last round keeps only what fits in one request: the earliest parts' summaries.
    if (parts.length === 1 || round === MAX_ROUNDS) return summarize(summaryPrompt(parts[0]!));
    const summaries: string[] = [];
    for (const [index, part] of parts.entries()) summaries.push(`[Summary of part ${index + 1} of ${parts.length}]: ${(await summarize(summaryPrompt(part))).trim()}`);
    current = summaries;
  }
}
