import type { MessageRecord } from '../db/repository.js';
import { formatLine } from './context-prompt.js';

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
  maxContextTokens: number;
  summarizationThreshold: number;
  keepRecentMessages: number;
}

/**
 * SPEC.md section 3: above the threshold (strictly), with more than keep_recent + 1 non-summary
 * messages, so at least one lies outside the recent window.
 */
export function needsSummary(totalTokens: number, activeMessages: number, policy: SummarizationPolicy): boolean {
  return totalTokens > policy.maxContextTokens * policy.summarizationThreshold && activeMessages > policy.keepRecentMessages + 1;
}
