import type { ToolOutcome } from '@mada/protocol';
import ora, { type Ora } from 'ora';
import { LiveText } from './live-text.js';
import type { Terminal } from './terminal.js';
import { safeText } from './safe-text.js';
import { toolLabel } from './tool-label.js';

/**
 * Progress of one run as it happens: a spinner naming the running tool on a rich terminal, one
 * line per step on a plain one. Each finished tool leaves a line with its result. The spinner
 * writes to the terminal by itself, so every text from the service is cleaned here.
 *
 * The answer is written as it arrives (LiveText) unless `live` is off (`mada run`, whose answer
 * goes to stdout at the end); the spinner stops while text is being written and starts again on a
 * fresh line when a tool or a message follows, so it never covers any.
 */
export class TurnProgress {
  private spinner: Ora | undefined;
  /** Labels of started tools not yet done, oldest first (calls may overlap). */
  private readonly running: { tool: string; label: string }[] = [];
  readonly live: LiveText | undefined;

  constructor(
    private readonly terminal: Terminal,
    private readonly workingDir: string,
    options: { live?: boolean } = {},
  ) {
    this.live = options.live === false ? undefined : new LiveText(terminal);
  }

  start(): void {
    if (!this.terminal.rich) return;
    this.spinner = ora({ text: 'Working…', stream: this.terminal.stdout, discardStdin: false, isEnabled: true });
    if (!this.live?.open) this.spinner.start();
  }

  /** Whatever text is being written ends its line; the spinner, if any, goes on below it. */
  private endText(): void {
    if (!this.live?.open) return;
    this.live.close();
    if (this.spinner && !this.spinner.isSpinning) this.spinner.start(this.running.at(-1)?.label ?? 'Working…');
  }

  toolStarted(tool: string, args: Record<string, unknown>): void {
    this.endText();
    const label = toolLabel(tool, args, this.workingDir, this.terminal.columns);
    this.running.push({ tool, label });
    if (this.spinner) this.spinner.text = label;
    else this.terminal.print(`→ ${label}`);
  }

  /** `outcome` is left out by older services, whose calls all show as done. */
  toolDone(tool: string, summary: string, outcome: ToolOutcome = 'ok'): void {
    this.endText();
    const index = this.running.findIndex((entry) => entry.tool === tool);
    const label = index >= 0 ? this.running.splice(index, 1)[0]!.label : safeText(tool);
    const result = safeText(summary).replace(/\s+/g, ' ').trim() || 'done';
    const ok = outcome === 'ok';
    // The summary of a refusal or a denial already says so; a failure's may not.
    const said = outcome === 'failed' && !/^error\b/i.test(result) ? `failed: ${result}` : result;
    if (!this.spinner) {
      this.terminal.print(`${ok ? '✓' : '✗'} ${safeText(tool)}: ${said}`);
      return;
    }
    const symbol = ok ? this.terminal.style('green', '✔') : this.terminal.style('red', '✗');
    this.spinner.stopAndPersist({ symbol, text: `${label} ${this.terminal.style('dim', `· ${said}`)}` });
    this.spinner.start(this.running.at(-1)?.label ?? 'Working…');
  }

  thinking(said: string): void {
    this.endText();
    const message = safeText(said);
    if (!this.spinner) {
      this.terminal.print(`… ${message}`);
      return;
    }
    const text = this.spinner.text;
    this.spinner.stopAndPersist({ symbol: this.terminal.style('dim', '·'), text: this.terminal.style('dim', message) });
    this.spinner.start(text);
  }

  /** A piece of the answer. */
  text(piece: string): void {
    if (!this.live) {
      if (this.spinner && this.running.length === 0) this.spinner.text = 'Writing the answer…';
      return;
    }
    if (this.spinner?.isSpinning && safeText(piece).trim() !== '') this.spinner.stop();
    this.live.write(piece);
  }

  /** Before a question: text being written ends its line and the spinner stops. */
  pause(): void {
    this.live?.close();
    this.stop();
  }

  stop(): void {
    this.spinner?.stop();
    this.spinner = undefined;
  }
}
