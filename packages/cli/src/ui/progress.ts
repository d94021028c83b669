import type { ToolOutcome } from '@mada/protocol';
import ora, { type Ora } from 'ora';
import type { Terminal } from './terminal.js';
import { safeText } from './safe-text.js';
import { toolLabel } from './tool-label.js';

/**
 * Progress of one run as it happens: a spinner naming the running tool on a rich terminal, one
 * line per step on a plain one. Each finished tool leaves a line with its result. The spinner
 * writes to the terminal by itself, so every text from the service is cleaned here.
 */
export class TurnProgress {
  private spinner: Ora | undefined;
  /** Labels of started tools not yet done, oldest first (calls may overlap). */
  private readonly running: { tool: string; label: string }[] = [];

  constructor(
    private readonly terminal: Terminal,
    private readonly workingDir: string,
  ) {}

  start(): void {
    if (!this.terminal.rich) return;
    this.spinner = ora({ text: 'Working…', stream: this.terminal.stdout, discardStdin: false, isEnabled: true }).start();
  }

  toolStarted(tool: string, args: Record<string, unknown>): void {
    const label = toolLabel(tool, args, this.workingDir, this.terminal.columns);
    this.running.push({ tool, label });
    if (this.spinner) this.spinner.text = label;
    else this.terminal.print(`→ ${label}`);
  }

  /** `outcome` is left out by older services, whose calls all show as done. */
  toolDone(tool: string, summary: string, outcome: ToolOutcome = 'ok'): void {
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
    const message = safeText(said);
    if (!this.spinner) {
      this.terminal.print(`… ${message}`);
      return;
    }
    const text = this.spinner.text;
    this.spinner.stopAndPersist({ symbol: this.terminal.style('dim', '·'), text: this.terminal.style('dim', message) });
    this.spinner.start(text);
  }

  writing(): void {
    if (this.spinner && this.running.length === 0) this.spinner.text = 'Writing the answer…';
  }

  stop(): void {
    this.spinner?.stop();
    this.spinner = undefined;
  }
}
