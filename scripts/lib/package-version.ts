export class PackageVersionError extends Error {}

const VERSION_FIELD = /("version"\s*:\s*")([^"\\]*)(")/g;

/**
 * Returns package.json text with only the top-level version changed, so the file keeps its
 * indentation, key order and final newline. Of the "version" fields in the text, the one whose
 * replacement changes the parsed document in exactly the top-level version is the one replaced.
 */
export function setPackageVersion(text: string, next: string): string {
  const document = JSON.parse(text) as Record<string, unknown>;
  const expected = JSON.stringify({ ...document, version: next });
  for (const match of text.matchAll(VERSION_FIELD)) {
    const start = match.index + match[1]!.length;
    const candidate = text.slice(0, start) + next + text.slice(start + match[2]!.length);
    if (JSON.stringify(JSON.parse(candidate)) === expected) return candidate;
  }
  throw new PackageVersionError('package.json has no top-level "version" string field');
}
