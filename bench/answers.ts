/** Markdown prose as an agent answers: paragraphs, lists, inline code; no tool call. */
export function prose(bytes: number): string {
  const paragraph =
    'The handler in `src/routes/users.ts` validates the body with zod, then calls the service.\n' +
    '- It reads the user (line 42) and checks ownership before the update.\n' +
    '- Errors map to HTTP in one place, so a missing user answers 404 with a detail.\n\n';
  return paragraph.repeat(Math.ceil(bytes / paragraph.length)).slice(0, bytes);
}

/** `text` cut into tokens of `size` characters, as a model streaming tiny tokens sends it. */
export function tokensOf(text: string, size = 4): string[] {
  const tokens: string[] = [];
  for (let at = 0; at < text.length; at += size) tokens.push(text.slice(at, at + size));
  return tokens;
}
