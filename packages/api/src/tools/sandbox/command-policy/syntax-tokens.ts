import { refuse } from './refusal.js';

/**
 * What both parsers must agree on, in a form they can both produce: where every command, word,
 * redirection and here-document sits in the source, the `|`/`&&`/`||` operators in order, and how
 * many top-level statements there are.
 */
export interface SyntaxTokens {
  /** `c@pos` command start, `w@pos-end` word, `r:op:fd@pos-end` redirection, `h:op:fd:delimiter@pos-end` here-document body. */
  items: string[];
  operators: string[];
  statements: number;
}

export class TokenCollector {
  readonly items: string[] = [];
  readonly operators: string[] = [];

  command(pos: number): void {
    this.items.push(`c@${pos}`);
  }

  word(pos: number, end: number): void {
    this.items.push(`w@${pos}-${end}`);
  }

  redirect(operator: string, fd: string, pos: number, end: number): void {
    this.items.push(`r:${operator}:${fd}@${pos}-${end}`);
  }

  hereDoc(operator: string, fd: string, delimiter: string, bodyPos: number, bodyEnd: number): void {
    this.items.push(`h:${operator}:${fd}:${delimiter}@${bodyPos}-${bodyEnd}`);
  }

  operator(op: string): void {
    this.operators.push(op);
  }

  finish(statements: number): SyntaxTokens {
    return { items: [...this.items].sort(), operators: this.operators, statements };
  }
}

/** Refuses unless unbash and tree-sitter read the same structure from the text. */
export function requireAgreement(a: SyntaxTokens, b: SyntaxTokens): void {
  const same =
    a.statements === b.statements &&
    a.items.length === b.items.length &&
    a.items.every((item, i) => item === b.items[i]) &&
    a.operators.join(' ') === b.operators.join(' ');
  if (!same) refuse('the command is ambiguous (two bash parsers read it differently)');
}
