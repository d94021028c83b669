/**
 * chmod and `mkdir -m` are judged by the mode they produce: nothing may let others write, and no
 * setuid/setgid bit may be set (the service may run as root). Returns the reason to refuse, if any.
 */
export function judgeMode(mode: string): string | undefined {
  return /^[0-7]+$/.test(mode) ? judgeNumeric(mode) : judgeSymbolic(mode);
}

function judgeNumeric(mode: string): string | undefined {
  const value = parseInt(mode, 8);
  if (value > 0o7777) return `mode ${mode} is not a valid mode`;
  if (mode.includes('777') || mode.includes('666') || (value & 0o002) !== 0) return `mode ${mode} lets others write`;
  if ((value & 0o6000) !== 0) return `mode ${mode} sets setuid or setgid`;
  return undefined;
}

// `[ugo]` first: otherwise `o=u` reads as `o=` followed by a stray `u`.
const CLAUSE = /^([ugoa]*)((?:[-+=](?:[ugo]|[rwxXst]*))+)$/;
const ACTION = /([-+=])([ugo]|[rwxXst]*)/g;

function judgeSymbolic(mode: string): string | undefined {
  let othersWrite = false;
  for (const clause of mode.split(',')) {
    const match = CLAUSE.exec(clause);
    if (!match) return `mode ${mode} is not understood`;
    // No who letters means everyone (minus the umask, which is not relied on).
    const who = match[1] === '' ? 'a' : (match[1] as string);
    const others = who.includes('o') || who.includes('a');
    const owners = who.includes('u') || who.includes('g') || who.includes('a');
    for (const [, op, perms = ''] of (match[2] as string).matchAll(ACTION)) {
      const adds = op === '+' || op === '=';
      if (adds && owners && perms.includes('s')) return `mode ${mode} sets setuid or setgid`;
      if (!others) continue;
      // Copying another class's bits (o=u, a+g) may copy a write bit.
      if (/^[ugo]$/.test(perms)) othersWrite = adds ? true : othersWrite;
      else if (perms.includes('w')) othersWrite = adds;
      else if (op === '=') othersWrite = false;
    }
  }
  return othersWrite ? `mode ${mode} lets others write` : undefined;
}
