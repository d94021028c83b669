/*
 * The few values the gitlink guard needs from files a command can write (`.gitmodules`, a
 * repository's `config`), found line by line with plain string operations: a regular expression
 * with `\s*` under the multiline flag backtracked over every blank line that followed each one,
 * and 60,000 blank lines held the service for seconds.
 */

/** Every value of `name` (any section, case-insensitive), quotes around it removed. */
export function configValues(text: string, name: string): string[] {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (const line of text.split('\n')) {
    const equals = line.indexOf('=');
    if (equals < 0 || line.slice(0, equals).trim().toLowerCase() !== wanted) continue;
    const value = line.slice(equals + 1).trim();
    values.push(value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value);
  }
  return values;
}
