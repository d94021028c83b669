import { renameOver, TEMPORARY_PREFIX } from '../util/held-dir.js';

/**
 * The program a sandboxed revert runs (`node -e`), as source: inside the sandbox nothing of the
 * service's own files is visible, so it must stand alone. It reads a plan from stdin (one JSON
 * line, then the contents of the files to write, one after another) and does what restore() in
 * revert.ts does, in the one directory bound writable at `plan.top`: each path walked to through
 * directories opened with O_NOFOLLOW (a missing one made, a link or file in its place removed
 * first), the old content written to a file made exclusively under a temporary name beside the
 * path and renamed over it (renameOver, whose source it carries: the path is never missing), or
 * the file or link at the path removed. Before anything it checks that `plan.top` is the pinned directory (device and
 * inode). It answers one JSON line on stdout: `{"ok":true}`, `{"refused":"pin"}` or
 * `{"swapped":"<path, base64>"}`; any other failure ends it with a message on stderr.
 *
 * Paths travel as base64 of their bytes: a name need not be UTF-8.
 */
export const RESTORE_PROGRAM = String.raw`'use strict';
const fs = require('node:fs');
const crypto = require('node:crypto');
${renameOver.toString()}
const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_WRONLY, O_CREAT, O_EXCL } = fs.constants;
const input = fs.readFileSync(0);
const end = input.indexOf(10);
const plan = JSON.parse(input.subarray(0, end).toString('utf8'));
let at = end + 1;
const answer = (result) => {
  fs.writeSync(1, JSON.stringify(result) + '\n');
  process.exit(0);
};
const top = fs.statSync(plan.top, { bigint: true });
if (String(top.dev) !== plan.dev || String(top.ino) !== plan.ino) answer({ refused: 'pin' });
const entry = (fd, name) => Buffer.concat([Buffer.from('/proc/self/fd/' + fd + '/'), name]);
const lstat = (path) => {
  try {
    return fs.lstatSync(path);
  } catch {
    return undefined;
  }
};
const enter = (fd, name) => {
  try {
    return fs.openSync(entry(fd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch {
    return undefined;
  }
};
const split = (path) => {
  const parts = [];
  for (let start = 0; ; ) {
    const slash = path.indexOf(47, start);
    if (slash < 0) return [...parts, path.subarray(start)];
    parts.push(path.subarray(start, slash));
    start = slash + 1;
  }
};
for (const file of plan.files) {
  const parts = split(Buffer.from(file.path, 'base64'));
  const name = parts.pop();
  let dir = fs.openSync(plan.top, O_RDONLY | O_DIRECTORY);
  for (const part of parts) {
    let next = enter(dir, part);
    if (next === undefined) {
      const stats = lstat(entry(dir, part));
      if (stats && !stats.isDirectory()) fs.unlinkSync(entry(dir, part));
      try {
        fs.mkdirSync(entry(dir, part));
      } catch (error) {
        if (error.code !== 'EEXIST') throw error;
      }
      next = enter(dir, part);
      if (next === undefined) answer({ swapped: file.path });
    }
    fs.closeSync(dir);
    dir = next;
  }
  const target = entry(dir, name);
  const stats = lstat(target);
  if (file.size === undefined) {
    if (stats && !stats.isDirectory()) fs.unlinkSync(target);
  } else {
    const content = input.subarray(at, at + file.size);
    at += file.size;
    const plain = (stats && stats.isFile() ? stats.mode & 0o777 : 0o644) & ~0o111;
    const mode = file.executable ? plain | ((plain & 0o444) >> 2) : plain;
    const temporary = entry(dir, Buffer.from(${JSON.stringify(TEMPORARY_PREFIX)} + crypto.randomBytes(8).toString('hex')));
    renameOver(fs, temporary, target, (made) => {
      const fd = fs.openSync(made, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
      try {
        fs.writeFileSync(fd, content);
        fs.fchmodSync(fd, mode);
      } finally {
        fs.closeSync(fd);
      }
    });
  }
  fs.closeSync(dir);
}
answer({ ok: true });
`;
