import {
  forEachChild,
  parse,
  type AndOr,
  type Command,
  type HereDoc,
  type HereString,
  type PipelineNode,
  type Redirect,
  type Redirection,
  type SyntaxNode,
  type Word,
} from 'unbash';
import { refuse } from './refusal.js';
import { describePart, evaluateWord } from './words.js';
import { TokenCollector, type SyntaxTokens } from './syntax-tokens.js';
import type { AndOrSpec, Fd, PipelineSpec, RedirectionSpec, ScriptSpec, ShellWord, SimpleCommandSpec } from './plan.js';
import { checkSourceCoverage, type Range } from './source-coverage.js';

/** Node types this policy understands; everything else in the tree is refused by name. */
const UNDERSTOOD = new Set([
  'Script',
  'Statement',
  'AndOr',
  'Pipeline',
  'Command',
  'Word',
  'Literal',
  'SingleQuoted',
  'DoubleQuoted',
  'Glob',
  'Redirect',
  'HereDoc',
  'HereString',
  'HereDocDelimiter',
  'HereDocBody',
  'FileDescriptor',
]);

const CONSTRUCT_NAMES: Record<string, string> = {
  Function: 'function definitions (a fork-bomb pattern)',
  Subshell: 'subshells ( ... )',
  BraceGroup: 'command groups { ...; }',
  If: 'if statements',
  For: 'for loops',
  ArithmeticFor: 'for loops',
  While: 'while/until loops',
  Case: 'case statements',
  Select: 'select loops',
  TestCommand: '[[ ... ]] tests',
  ArithmeticCommand: '(( ... )) arithmetic',
  Coproc: 'coproc',
  Redirected: 'redirections on compound commands',
  Time: 'time',
  Negation: '! negation',
  Assignment: 'variable assignments (VAR=value)',
  ArrayValue: 'array assignments',
  FileDescriptorVariable: '{var}> redirections',
};

const describeNode = (type: string): string => CONSTRUCT_NAMES[type] ?? describePart(type);

/** Walks every node (including word parts) and refuses the first construct not understood. */
function requireUnderstood(node: SyntaxNode): void {
  if (!UNDERSTOOD.has(node.type)) refuse(describeNode(node.type));
  // Here-document bodies are judged by Reader.hereDoc, which can say how to quote them.
  if (node.type !== 'HereDocBody') forEachChild(node, requireUnderstood);
}

class Reader {
  readonly tokens = new TokenCollector();
  readonly covered: Range[] = [];

  constructor(
    private readonly source: string,
    private readonly home: string,
  ) {}

  andOr(node: PipelineNode | AndOr): AndOrSpec {
    if (node.type !== 'AndOr') return { first: this.pipeline(node), rest: [] };
    const pipelines = node.commands.map((command, index) => {
      const spec = this.pipeline(command);
      const op = node.operators[index];
      if (op !== undefined) this.tokens.operator(op);
      return spec;
    });
    const [first, ...others] = pipelines;
    if (first === undefined) return refuse('an empty && / || list');
    return {
      first,
      rest: others.map((pipeline, index) => ({ operator: node.operators[index] as '&&' | '||', pipeline })),
    };
  }

  pipeline(node: PipelineNode): PipelineSpec {
    if (node.type !== 'Pipeline') return { commands: [this.command(node)] };
    if (node.prefixes.length > 0) refuse(describeNode(node.prefixes[0]?.type ?? 'Negation'));
    const commands = node.commands.map((command, index) => {
      const spec = this.command(command);
      const op = node.operators[index];
      if (op === '|&') refuse('|& (piping stderr); use 2>&1 |');
      if (op !== undefined) this.tokens.operator(op);
      return spec;
    });
    return { commands };
  }

  command(node: PipelineNode): SimpleCommandSpec {
    if (node.type !== 'Command') return refuse(describeNode(node.type));
    return this.simpleCommand(node);
  }

  simpleCommand(node: Command): SimpleCommandSpec {
    if (node.name === undefined) return refuse('a redirection or assignment without a command');
    const redirections: RedirectionSpec[] = [];
    const args: ShellWord[] = [];
    for (const item of [...node.prefix, ...node.suffix]) {
      if (item.type === 'Assignment') return refuse(describeNode('Assignment'));
      if (item.type === 'Word') args.push(this.argument(item));
      else redirections.push(...this.redirection(item));
    }
    this.tokens.command(node.name.pos);
    this.tokens.word(node.name.pos, node.name.end);
    this.covered.push([node.name.pos, node.name.end]);
    const name = evaluateWord(node.name, this.home);
    if (name.glob !== undefined) refuse(`glob characters in the program name ${name.source}`);
    return { program: name.value, args, redirections, source: this.source.slice(node.pos, node.end) };
  }

  argument(word: Word): ShellWord {
    // tree-sitter-bash drops a lone `-` right before a here-document (`python3 - <<'EOF'`);
    // that one literal word is left out of the comparison so the common form still runs.
    const dashBeforeHereDoc = word.text === '-' && /^[ \t]*<</.test(this.source.slice(word.end));
    if (!dashBeforeHereDoc) this.tokens.word(word.pos, word.end);
    this.covered.push([word.pos, word.end]);
    return evaluateWord(word, this.home);
  }

  redirection(node: Redirection): RedirectionSpec[] {
    const fd = descriptor(node);
    if (node.type === 'HereDoc') return [this.hereDoc(node, fd)];
    if (node.type === 'HereString') return [this.hereString(node, fd)];
    return this.redirect(node, fd);
  }

  redirect(node: Redirect, fd: Fd | undefined): RedirectionSpec[] {
    const target = node.target;
    if (target === undefined) return refuse('a redirection without a target');
    this.tokens.redirect(node.operator, fd === undefined ? '' : String(fd), node.pos, node.end);
    this.tokens.word(target.pos, target.end);
    this.covered.push([node.pos, node.end]);
    const word = evaluateWord(target, this.home);
    if (word.glob !== undefined) refuse(`glob characters in the redirection target ${word.source}`);
    switch (node.operator) {
      case '<':
        return [{ kind: 'read', fd: fd ?? 0, target: word }];
      case '>':
      case '>|':
        return [{ kind: 'write', fd: fd ?? 1, target: word, append: false }];
      case '>>':
        return [{ kind: 'write', fd: fd ?? 1, target: word, append: true }];
      case '&>':
      case '&>>':
        if (fd !== undefined) refuse(`${node.operator} with a file descriptor`);
        return [
          { kind: 'write', fd: 1, target: word, append: node.operator === '&>>' },
          { kind: 'duplicate', fd: 2, from: 1 },
        ];
      case '>&':
      case '<&':
        return [{ kind: 'duplicate', fd: fd ?? (node.operator === '>&' ? 1 : 0), from: standardFd(word.value, node.operator) }];
      default:
        return refuse(`the ${node.operator} redirection`);
    }
  }

  hereDoc(node: HereDoc, fd: Fd | undefined): RedirectionSpec {
    if (node.operator !== '<<') refuse('<<- here-documents; use <<');
    if (fd !== undefined && fd !== 0) refuse('here-documents on a descriptor other than 0');
    const { delimiter, body, closing } = node;
    if (delimiter === undefined || closing === undefined) return refuse('an unterminated here-document');
    if (!delimiter.quoted && (body.parts ?? []).some((part) => part.type !== 'Literal')) {
      refuse(`expansions in a here-document; quote the delimiter (<<'${delimiter.value}')`);
    }
    if (!delimiter.quoted && /[$`\\]/.test(body.text)) refuse(`$, \` or \\ in an unquoted here-document; quote the delimiter (<<'${delimiter.value}')`);
    this.tokens.hereDoc(node.operator, fd === undefined ? '' : String(fd), delimiter.text, body.pos, body.end);
    this.covered.push([node.pos, node.end], [body.pos, body.end], [closing.pos, closing.end]);
    return { kind: 'text', fd: 0, text: body.text };
  }

  hereString(node: HereString, fd: Fd | undefined): RedirectionSpec {
    if (fd !== undefined && fd !== 0) refuse('here-strings on a descriptor other than 0');
    const target = node.target;
    if (target === undefined) return refuse('a here-string without text');
    this.tokens.redirect(node.operator, fd === undefined ? '' : String(fd), node.pos, node.end);
    this.tokens.word(target.pos, target.end);
    this.covered.push([node.pos, node.end]);
    // Bash does no pathname expansion in here-strings, so a glob stays literal text.
    return { kind: 'text', fd: 0, text: `${evaluateWord(target, this.home).value}\n` };
  }
}

function descriptor(node: Redirection): Fd | undefined {
  const d = node.descriptor;
  if (d === undefined) return undefined;
  if (d.type !== 'FileDescriptor') return refuse(describeNode(d.type));
  if (d.value !== 0 && d.value !== 1 && d.value !== 2) refuse('file descriptors other than 0, 1 and 2');
  return d.value as Fd;
}

function standardFd(text: string, operator: string): Fd {
  if (text === '0' || text === '1' || text === '2') return Number(text) as Fd;
  return refuse(`${operator} must name descriptor 0, 1 or 2 (got ${text})`);
}

export interface UnbashReading {
  script: ScriptSpec;
  tokens: SyntaxTokens;
  /** `;` and newline separators in the text, even where they end the only statement. */
  separators: number;
}

/** Parses with unbash and turns the tree into a ScriptSpec, refusing whatever it does not understand. */
export function readWithUnbash(source: string, home: string): UnbashReading {
  const ast = parse(source);
  const error = ast.errors?.[0];
  if (error !== undefined) refuse(`the command does not parse (${error.message})`);
  requireUnderstood(ast);
  const reader = new Reader(source, home);
  const statements = ast.commands.map((statement) => {
    if (statement.background === true) refuse('background jobs (&)');
    return reader.andOr(statement.command);
  });
  if (statements.length === 0) refuse('the command is empty');
  const separators = checkSourceCoverage(source, reader.covered, reader.tokens.operators);
  return { script: { statements }, tokens: reader.tokens.finish(statements.length), separators };
}
