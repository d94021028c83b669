/** A planted ignore file as large as the search reads (16 MiB), of more distinct wildcard rules than it applies. */

/** The most an ignore file may weigh and still be read (ignore-files.ts). */
const MAX_IGNORE_FILE_BYTES = 16 * 1024 * 1024;
export const GENERATED_RULES = 52_000;

/**
 * Rules a project would write first (they must keep working), then `rules` distinct wildcard
 * rules (52,000 unless told), then one more literal rule the reader never gets to: the file fills
 * `bytes` (16 MiB unless told) less a little.
 */
export function hugeIgnoreFile(head: readonly string[], tail: string, bytes = MAX_IGNORE_FILE_BYTES, rules = GENERATED_RULES): string {
  const headText = `${head.join('\n')}\n`;
  const room = bytes - 4096 - headText.length - tail.length;
  const lineBytes = Math.floor(room / rules);
  const lines = Array.from({ length: rules }, (_, i) => {
    const start = `gen-${i}/*-`;
    const end = `-[0-9]?.tmp${i}`;
    return `${start}${'p'.repeat(lineBytes - start.length - end.length - 1)}${end}`;
  });
  const text = `${headText}${lines.join('\n')}\n${tail}\n`;
  if (text.length > bytes || text.length < bytes - 64 * 1024) throw new Error(`the ignore file weighs ${text.length} bytes`);
  return text;
}

/** Collects the process warnings emitted while `work` runs. */
export async function collectWarnings<T>(work: () => Promise<T>): Promise<{ value: T; warnings: Error[] }> {
  const warnings: Error[] = [];
  const listener = (warning: Error): void => {
    warnings.push(warning);
  };
  process.on('warning', listener);
  try {
    const value = await work();
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    return { value, warnings };
  } finally {
    process.off('warning', listener);
  }
}
