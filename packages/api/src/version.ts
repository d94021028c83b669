import { readFileSync } from 'node:fs';

/** The package version, read from package.json beside src/ or dist/, so releases need no code edit. */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
