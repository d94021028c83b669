export const TITLE_MAX_CHARACTERS = 100;

/**
 * The title derived from a conversation's first user message: its first 100 characters, counted
 * in Unicode code points (an emoji is one), with `...` when the content is longer.
 */
export function titleFromContent(content: string): string {
  const codePoints = Array.from(content);
  if (codePoints.length <= TITLE_MAX_CHARACTERS) return content;
  return `${codePoints.slice(0, TITLE_MAX_CHARACTERS).join('')}...`;
}
