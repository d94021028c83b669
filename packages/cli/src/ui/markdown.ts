import { Marked, type MarkedExtension, type Renderer, type Tokens } from 'marked';
import { markedTerminal } from 'marked-terminal';
import { safeText } from './safe-text.js';
import type { Terminal } from './terminal.js';

function terminalMarked(width: number): Marked {
  // @types/marked-terminal describes an older marked; at run time this is a marked extension.
  const extension = markedTerminal({ width, reflowText: true, tab: 2 }) as unknown as MarkedExtension;
  const plainText = extension.renderer?.text;
  // marked-terminal 7 prints a tight list item's text token raw, so `code` and **bold** inside
  // list items stayed as typed; their inline tokens are rendered here instead.
  const text = function (this: Renderer, token: Tokens.Text | Tokens.Escape): string | false {
    if ('tokens' in token && token.tokens && token.tokens.length > 0) return this.parser.parseInline(token.tokens);
    return plainText ? plainText.call(this, token) : token.text;
  };
  // A link always shows where it goes. As a terminal hyperlink (OSC 8, on terminals that have
  // them) its text could name one place and open another; the output guard removes OSC 8 anyway.
  const link = function (this: Renderer, token: Tokens.Link): string {
    const label = this.parser.parseInline(token.tokens);
    return label === token.href ? token.href : `${label} (${token.href})`;
  };
  return new Marked({ ...extension, renderer: { ...extension.renderer, text, link } });
}

/**
 * The answer for the terminal: rendered markdown on a rich terminal; on a plain one the text
 * as the agent wrote it, since markdown source is already readable plain text. The answer echoes
 * files of the working directory: its escape sequences are removed before the renderer adds its own.
 */
export function renderAnswer(text: string, terminal: Terminal): string {
  const trimmed = safeText(text).trim();
  if (!terminal.rich || trimmed === '') return trimmed;
  const rendered = terminalMarked(Math.min(terminal.columns, 120)).parse(trimmed, { async: false });
  return rendered.replace(/\n+$/, '');
}
