import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/**
 * A real pseudo-terminal: a tmux server on its own socket running one command in a 120x40
 * window. Tests type keys into it and read the screen back.
 */
export class TmuxTerminal {
  private socketPath = '';

  private constructor(private readonly socket: string) {}

  /** Runs `command` with exactly `env`; when it exits the pane prints `[exit N]` and stays. */
  static start(command: string[], env: Record<string, string>, cwd: string): TmuxTerminal {
    const terminal = new TmuxTerminal(`mada-cli-${randomBytes(6).toString('hex')}`);
    const assignments = Object.entries({ TERM: 'xterm-256color', ...env }).map(([name, value]) => `${name}=${quote(value)}`);
    const script = `cd ${quote(cwd)} && env -i ${assignments.join(' ')} ${command.map(quote).join(' ')}; echo "[exit $?]"; sleep 600`;
    terminal.tmux('new-session', '-d', '-x', '120', '-y', '40', '-s', 'main', script);
    terminal.socketPath = terminal.tmux('display-message', '-p', '#{socket_path}').trim();
    return terminal;
  }

  /** Keys by tmux name (`Enter`, `Tab`, `C-c`, `Up`). */
  keys(...keys: string[]): void {
    this.tmux('send-keys', '-t', 'main', ...keys);
  }

  /** Literal text, typed as is. */
  type(text: string): void {
    this.tmux('send-keys', '-t', 'main', '-l', text);
  }

  /** The visible screen plus scroll-back, trailing blanks removed. */
  screen(): string {
    return this.capture('-S', '-200');
  }

  /** The screen with its colours, as SGR escape sequences (tmux writes its own, not the program's bytes). */
  coloured(): string {
    return this.capture('-e', '-S', '-200');
  }

  /** Only what is on the screen now (a cleared screen goes to tmux's scroll-back). */
  visible(): string {
    return this.capture();
  }

  /** Lets programs write the clipboard with OSC 52, as many terminals do: tmux keeps it as a paste buffer. */
  acceptClipboardWrites(): void {
    this.tmux('set-option', '-g', 'set-clipboard', 'on');
  }

  /** What programs wrote to the clipboard (OSC 52), one buffer per write. */
  clipboard(): string {
    return this.tmux('list-buffers', '-F', '#{buffer_sample}');
  }

  /** The window title as programs set it (OSC 0 and 2). */
  title(): string {
    return this.tmux('display-message', '-p', '#{pane_title}').trim();
  }

  /** Waits until the screen matches; fails with the screen shown. */
  async waitFor(expected: string | RegExp, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = this.screen();
      if (typeof expected === 'string' ? screen.includes(expected) : expected.test(screen)) return screen;
      if (Date.now() > deadline) throw new Error(`screen never showed ${String(expected)}; it shows:\n${screen}`);
      await sleep(100);
    }
  }

  private capture(...range: string[]): string {
    return this.tmux('capture-pane', '-p', '-J', ...range, '-t', 'main')
      .split('\n')
      .map((line) => line.trimEnd())
      .join('\n')
      .trimEnd();
  }

  /** The last line that has text: where the cursor's line usually is. */
  lastLine(): string {
    return this.screen().split('\n').at(-1) ?? '';
  }

  /** Ends the server and removes its socket file, which tmux leaves behind. */
  kill(): void {
    try {
      this.tmux('kill-server');
    } catch {
      // Already gone.
    }
    if (this.socketPath !== '') rmSync(this.socketPath, { force: true });
  }

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
  }
}
