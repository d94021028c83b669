import { readFileSync } from 'node:fs';

/** The version in package.json, read at run time so a release bump needs no code change. */
export function cliVersion(): string {
  // src/ and dist/ both sit one level below the package root.
  const manifest: unknown = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const version = (manifest as { version?: unknown }).version;
  return typeof version === 'string' ? version : '0.0.0';
}
