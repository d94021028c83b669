/**
 * The lines `mada doctor` and the error hints give a user to copy into a shell. What they quote
 * (a model name, a path) may come from the service: anything but plain characters is put in
 * single quotes, so a pasted line does only what it says.
 */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:@%+,=-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** `ALLOWED_PATHS=<paths>` as the service parses it: comma-separated, or a JSON array when a path holds a comma. */
export function allowedPathsSetting(paths: string[]): string {
  const value = paths.some((path) => path.includes(',')) ? JSON.stringify(paths) : paths.join(',');
  return `ALLOWED_PATHS=${shellWord(value)}`;
}

/**
 * The one line that lets agents reach `directory`: the service started again with it in
 * ALLOWED_PATHS. `current` are the paths it has now when known (kept); otherwise the user is told
 * to keep theirs.
 */
export function allowedPathsFix(directory: string, current?: string[]): string {
  const paths = [...(current ?? []).filter((path) => path !== directory), directory];
  const keep = current === undefined ? ' (and the paths it has, comma-separated)' : '';
  return `start the service with ${allowedPathsSetting(paths)} npm start${keep}, or have an admin add it to your workspace`;
}
