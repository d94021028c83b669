import { CliError } from '../errors.js';
import type { LiveText } from '../ui/live-text.js';
import { renderAnswer } from '../ui/markdown.js';
import type { Terminal } from '../ui/terminal.js';
import type { StreamEnd } from './event-loop.js';

/** The answer, unless it was written as it arrived: then only the end of that is finished. */
export function showAnswer(terminal: Terminal, answer: string, live?: LiveText): void {
  if (live?.shown) {
    live.finish();
    return;
  }
  terminal.print(answer.trim() === '' ? terminal.style('dim', '(no answer)') : renderAnswer(answer, terminal));
}

export function showFooter(terminal: Terminal, totalTokens: number | undefined, summarized: boolean | undefined): void {
  const parts: string[] = [];
  if (totalTokens !== undefined) parts.push(`${totalTokens.toLocaleString('en-US')} tokens in this session`);
  if (summarized) parts.push('older messages were summarized');
  if (parts.length > 0) terminal.print(terminal.style('dim', `(${parts.join('; ')})`));
}

/** Ends a stream that did not finish with `done`: what arrived is shown, then why it stopped. */
export function unfinished(terminal: Terminal, outcome: Exclude<StreamEnd, { end: 'done' }>, live?: LiveText): never {
  if (outcome.answer.trim() !== '') showAnswer(terminal, outcome.answer, live);
  if (outcome.end === 'error') throw new CliError(`The run failed: ${outcome.message}`);
  throw new CliError('The stream ended before the run finished', 'the reply may be incomplete; the service log may say why');
}
