import { createRequire } from 'node:module';
import { Language, Parser, type Node } from 'web-tree-sitter';
import { refuse } from './refusal.js';
import { TokenCollector, type SyntaxTokens } from './syntax-tokens.js';

let parserPromise: Promise<Parser> | undefined;

async function loadParser(): Promise<Parser> {
  await Parser.init();
  const wasm = createRequire(import.meta.url).resolve('tree-sitter-bash/tree-sitter-bash.wasm');
  const parser = new Parser();
  parser.setLanguage(await Language.load(wasm));
  return parser;
}

/** The tree-sitter parser, loaded once; a failed load is retried on the next call. */
export function treeSitterParser(): Promise<Parser> {
  parserPromise ??= loadParser().catch((error: unknown) => {
    parserPromise = undefined;
    throw error;
  });
  return parserPromise;
}

const WORD_LIKE = new Set(['word', 'string', 'raw_string', 'concatenation', 'number']);
const STATEMENT_PARTS = new Set(['list', 'pipeline', 'command', 'redirected_statement', 'heredoc_redirect']);
const REDIRECTS = new Set(['file_redirect', 'heredoc_redirect', 'herestring_redirect']);
const OPERATORS = new Set(['|', '&&', '||']);

const children = (node: Node): Node[] => node.children.filter((child): child is Node => child !== null);

/** Words: a quoted string may hold only its text, a concatenation only word-like pieces. */
function requireLiteralWord(node: Node): void {
  if (!WORD_LIKE.has(node.type) || node.isError || node.isMissing) refuse(`shell syntax "${node.type}"`);
  for (const child of children(node)) {
    if (node.type === 'string' && (child.type === '"' || child.type === 'string_content')) continue;
    if (node.type === 'concatenation') {
      requireLiteralWord(child);
      continue;
    }
    refuse(`shell syntax "${child.type}"`);
  }
}

class TreeReader {
  readonly tokens = new TokenCollector();

  statement(node: Node): void {
    if (node.type === 'command') return this.command(node);
    if (REDIRECTS.has(node.type)) return this.redirect(node);
    if (!STATEMENT_PARTS.has(node.type)) refuse(`shell syntax "${node.type}"`);
    for (const child of children(node)) this.part(child, node);
  }

  /** Children of a list, pipeline, command or redirect container. */
  part(child: Node, parent: Node): void {
    if (child.isError || child.isMissing) refuse('the command does not parse');
    if (child.type === 'comment') return;
    if (OPERATORS.has(child.type)) {
      this.tokens.operator(child.type);
    } else if (STATEMENT_PARTS.has(child.type) || REDIRECTS.has(child.type)) {
      this.statement(child);
    } else if (!(parent.type === 'heredoc_redirect' && HEREDOC_PIECES.has(child.type))) {
      refuse(`shell syntax "${child.type}"`);
    }
  }

  command(node: Node): void {
    node.children.forEach((child, index) => {
      if (child === null) return;
      const field = node.fieldNameForChild(index);
      if (field === 'name') {
        if (child.type !== 'command_name' || child.childCount !== 1 || child.firstChild === null) refuse('an unusual command name');
        requireLiteralWord(child.firstChild as Node);
        this.tokens.command(child.startIndex);
        this.tokens.word(child.startIndex, child.endIndex);
      } else if (field === 'argument') {
        requireLiteralWord(child);
        this.tokens.word(child.startIndex, child.endIndex);
      } else if (field === 'redirect' && REDIRECTS.has(child.type)) {
        this.redirect(child);
      } else {
        refuse(`shell syntax "${child.type}"`);
      }
    });
  }

  redirect(node: Node): void {
    if (node.type === 'heredoc_redirect') return this.hereDoc(node);
    let fd = '';
    let operator = '';
    let firstEnd = -1;
    for (const child of children(node)) {
      if (child.type === 'file_descriptor') fd = child.text;
      else if (!child.isNamed) operator = child.type;
      else {
        requireLiteralWord(child);
        this.tokens.word(child.startIndex, child.endIndex);
        if (firstEnd < 0) firstEnd = child.endIndex;
      }
    }
    if (firstEnd < 0) refuse('a redirection without a target');
    this.tokens.redirect(operator, fd, node.startIndex, firstEnd);
  }

  hereDoc(node: Node): void {
    let start = '';
    let body: Node | undefined;
    let operator = '';
    for (const child of children(node)) {
      if (child.type === 'heredoc_start') start = child.text;
      else if (child.type === 'heredoc_body') body = child;
      else if (child.type === '<<' || child.type === '<<-') operator = child.type;
      else if (child.type === 'heredoc_end') continue;
      else this.part(child, node);
    }
    if (body === undefined) return refuse('an empty or unterminated here-document');
    for (const piece of children(body)) if (piece.type !== 'heredoc_content') refuse('expansions in a here-document');
    this.tokens.hereDoc(operator, '', start, body.startIndex, body.endIndex);
  }
}

const HEREDOC_PIECES = new Set(['heredoc_start', 'heredoc_body', 'heredoc_end', '<<', '<<-']);

/** Parses with tree-sitter-bash and extracts the same tokens as the unbash reader. */
export async function readWithTreeSitter(source: string): Promise<SyntaxTokens> {
  const parser = await treeSitterParser();
  const tree = parser.parse(source);
  if (tree === null) return refuse('the command does not parse');
  try {
    const root = tree.rootNode;
    if (root.hasError) refuse('the command does not parse');
    const reader = new TreeReader();
    let statements = 0;
    for (const child of children(root)) {
      if (child.type === 'comment' || child.type === ';') continue;
      if (child.type === '&') refuse('background jobs (&)');
      reader.statement(child);
      statements++;
    }
    return reader.tokens.finish(statements);
  } finally {
    tree.delete();
  }
}
