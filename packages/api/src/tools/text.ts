/** `text` cut to at most `max` UTF-16 units without splitting a surrogate pair, and whether it was cut. */
export function cutText(text: string, max: number): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  const last = text.charCodeAt(max - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? max - 1 : max;
  return { text: text.slice(0, end), cut: true };
}

/** A long line shortened for display, with a visible marker so the agent knows text is missing. */
export function shortenLine(line: string, max: number): string {
  const { text, cut } = cutText(line, max);
  return cut ? `${text} [... line cut at ${max} characters]` : text;
}

/** `n` with the noun in singular or plural: `1 line`, `3 lines`. */
export const counted = (n: number, singular: string, plural = `${singular}s`): string => `${n} ${n === 1 ? singular : plural}`;
