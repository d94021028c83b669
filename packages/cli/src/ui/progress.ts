import ora, { type Ora } from 'ora';
import type { Terminal } from './terminal.js';
import { toolLabel } from './tool-label.js';

/**
 * Progress of one run as it happens: a spinner naming the running tool on a rich terminal, one
 * line per step on a plain one. Each finished tool leaves a line with its result.
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

  toolDone(tool: string, summary: string): void {
    const index = this.running.findIndex((entry) => entry.tool === tool);
    const label = index >= 0 ? this.running.splice(index, 1)[0]!.label : tool;
    const result = summary.replace(/\s+/g, ' ').trim() || 'done';
    if (!this.spinner) {
      this.terminal.print(`✓ ${tool}: ${result}`);
      return;
    }
    this.spinner.stopAndPersist({ symbol: this.terminal.style('green', '✔'), text: `${label} ${this.terminal.style('dim', `· ${result}`)}` });
    this.spinner.start(this.running.at(-1)?.label ?? 'Working…');
  }

  thinking(message: string): void {
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
