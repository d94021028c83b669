import { refuse } from '../refusal.js';

const NO_ARGUMENT = new Set([...'=dDgGhHnNpPxzF']);
const OPTIONAL_NUMBER = new Set([...'lqQL']);
const LABELLED = new Set([...'btT']);
const TEXT = new Set([...'aic']);

/**
 * Reads a GNU sed script far enough to find every command, and refuses the ones that touch files
 * or run programs (r R w W e, and the s///e and s///w flags). sed also runs with --sandbox, which
 * rejects the same commands, so a reading mistake here cannot open a hole.
 */
class SedScript {
  private i = 0;
  private depth = 0;

  constructor(private readonly text: string) {}

  private peek(): string | undefined {
    return this.text[this.i];
  }

  private fail(what: string): never {
    return refuse(`sed script not understood (${what}): ${this.text}`);
  }

  private skip(chars: string): void {
    while (this.peek() !== undefined && chars.includes(this.peek() as string)) this.i++;
  }

  /** Up to the next unescaped delimiter; returns with the cursor after it. */
  private delimited(delimiter: string): void {
    for (;;) {
      const c = this.text[this.i++];
      if (c === undefined) this.fail('unterminated expression');
      if (c === '\\') this.i++;
      else if (c === delimiter) return;
    }
  }

  private restOfLine(): void {
    while (this.peek() !== undefined && this.peek() !== '\n') this.i++;
  }

  private address(): boolean {
    const c = this.peek();
    if (c === undefined) return false;
    if (/\d/.test(c)) {
      this.skip('0123456789');
      if (this.peek() === '~') {
        this.i++;
        this.skip('0123456789');
      }
    } else if (c === '$') {
      this.i++;
    } else if (c === '/' || c === '\\') {
      this.i++;
      const delimiter = c === '/' ? '/' : this.text[this.i++];
      if (delimiter === undefined || delimiter === '\n') this.fail('bad address');
      this.delimited(delimiter as string);
      this.skip('IM');
    } else {
      return false;
    }
    return true;
  }

  private addresses(): void {
    if (!this.address()) return;
    this.skip(' \t');
    if (this.peek() !== ',') return;
    this.i++;
    this.skip(' \t');
    if (this.peek() === '+' || this.peek() === '~') {
      this.i++;
      this.skip('0123456789');
    } else if (!this.address()) {
      this.fail('bad second address');
    }
  }

  private substitute(command: string): void {
    const delimiter = this.text[this.i++];
    if (delimiter === undefined || delimiter === '\n' || delimiter === '\\') this.fail(`bad ${command} delimiter`);
    this.delimited(delimiter as string);
    this.delimited(delimiter as string);
    if (command === 'y') return;
    for (let c = this.peek(); c !== undefined && /[gpiImM0-9ew]/.test(c); c = this.peek()) {
      if (c === 'e') refuse('sed s///e runs the pattern space as a command');
      if (c === 'w') refuse('sed s///w writes a file');
      this.i++;
    }
  }

  private textArgument(): void {
    this.skip(' \t');
    if (this.peek() === '\\') {
      this.i++;
      this.skip(' \t');
      if (this.peek() === '\n') this.i++;
    }
    // A line ending in a backslash continues the text.
    for (;;) {
      const c = this.text[this.i];
      if (c === undefined || c === '\n') return;
      this.i += c === '\\' ? 2 : 1;
    }
  }

  private label(): void {
    this.skip(' \t');
    while (this.peek() !== undefined && !';\n'.includes(this.peek() as string)) this.i++;
  }

  private command(): void {
    const c = this.text[this.i++];
    if (c === undefined) this.fail('missing command');
    const command = c as string;
    if (command === '{' || command === '}') {
      this.depth += command === '{' ? 1 : -1;
      if (this.depth < 0) this.fail('unexpected }');
      return;
    }
    if ('rRwW'.includes(command)) refuse(`sed ${command} command ${'rR'.includes(command) ? 'reads' : 'writes'} a file`);
    if (command === 'e') refuse('sed e command runs a shell command');
    if (command === 's' || command === 'y') return this.substitute(command);
    if (TEXT.has(command)) return this.textArgument();
    if (LABELLED.has(command) || command === ':' || command === 'v') return this.label();
    if (OPTIONAL_NUMBER.has(command)) {
      this.skip(' \t');
      this.skip('0123456789');
      return;
    }
    if (!NO_ARGUMENT.has(command)) this.fail(`unknown command ${command}`);
  }

  private separator(): void {
    this.skip(' \t');
    const c = this.peek();
    if (c === undefined || c === ';' || c === '\n' || c === '}' || c === '#') return;
    this.fail(`unexpected ${c}`);
  }

  check(): void {
    for (;;) {
      this.skip(' \t\n;');
      const c = this.peek();
      if (c === undefined) break;
      if (c === '#') {
        this.restOfLine();
        continue;
      }
      this.addresses();
      this.skip(' \t');
      while (this.peek() === '!') {
        this.i++;
        this.skip(' \t');
      }
      const before = this.text[this.i];
      this.command();
      if (before !== '{') this.separator();
    }
    if (this.depth !== 0) this.fail('unbalanced braces');
  }
}

export function checkSedScript(script: string): void {
  new SedScript(script).check();
}
