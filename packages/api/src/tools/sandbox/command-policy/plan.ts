/**
 * The validated shape of a command line. The policy builds it from the parsed text; the executor
 * runs it without a shell. Words keep their glob pattern because pathname expansion happens just
 * before each command runs, as in bash, and the expanded argv is checked again at that moment.
 */

export type ShellToolName = 'bash_readonly' | 'bash';

/** One piece of an unquoted glob: bash matches these against directory entries. */
export type GlobToken =
  | { kind: 'literal'; text: string }
  | { kind: 'star' }
  | { kind: 'question' }
  /** A bracket expression already translated to a JavaScript character class, e.g. `[a-z]`. */
  | { kind: 'class'; regex: string };

/** A word after quote removal (and `~` expansion). */
export interface ShellWord {
  /** As written in the command, for messages. */
  source: string;
  /** After quote removal: what the program receives when no glob applies or nothing matches. */
  value: string;
  /** Present when the word holds unquoted glob characters. */
  glob?: GlobToken[];
  /** A leading `~` was expanded to the home directory. */
  tilde?: true;
}

export type Fd = 0 | 1 | 2;

export type RedirectionSpec =
  | { kind: 'read'; fd: Fd; target: ShellWord }
  | { kind: 'write'; fd: Fd; target: ShellWord; append: boolean }
  /** `n>&m`: fd n becomes a copy of whatever fd m points to at that moment. */
  | { kind: 'duplicate'; fd: Fd; from: Fd }
  /** Here-document or here-string: the text is fed to fd 0. */
  | { kind: 'text'; fd: Fd; text: string };

export interface SimpleCommandSpec {
  /** The program name after quote removal: a bare allowlisted name. */
  program: string;
  args: ShellWord[];
  redirections: RedirectionSpec[];
  /** The command's source text, for messages. */
  source: string;
}

export interface PipelineSpec {
  commands: SimpleCommandSpec[];
}

export interface AndOrSpec {
  first: PipelineSpec;
  rest: { operator: '&&' | '||'; pipeline: PipelineSpec }[];
}

/** Statements run one after the other (`;` or newline). */
export interface ScriptSpec {
  statements: AndOrSpec[];
}
