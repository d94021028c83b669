/** The JSON objects of an SSE body: `data: ` lines, comments (`: ping`) skipped. */
export function parseFrames(body: string): Record<string, unknown>[] {
  return body
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => JSON.parse(block.slice('data: '.length)) as Record<string, unknown>);
}
