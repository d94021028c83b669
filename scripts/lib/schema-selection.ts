import { basename, dirname, resolve } from 'node:path';

/**
 * Which schema a data file is checked against, first rule that applies:
 * 1. the --schema flag, for every file of the run;
 * 2. the file name ends in .<schema>.json (lower-docks.district.json);
 * 3. the nearest enclosing directory is named <schema> or <schema>s (districts/lower-docks.json,
 *    examples/district/valid/docks.json).
 * A file no rule matches has no schema; the caller reports it rather than guessing.
 */
export function selectSchema(file: string, names: readonly string[], forced?: string): string | undefined {
  if (forced !== undefined) return forced;
  return byFileName(basename(file), names) ?? byDirectory(resolve(file), names);
}

function byFileName(name: string, names: readonly string[]): string | undefined {
  return names.find((schema) => name.endsWith(`.${schema}.json`));
}

function byDirectory(file: string, names: readonly string[]): string | undefined {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const name = basename(dir);
    const match = names.find((schema) => name === schema || name === `${schema}s`);
    if (match) return match;
  }
  return undefined;
}
