/*
 * One side of a race between two `bash` commands' guards on one repository, run as a process of its
 * own so that the two really interleave (each guard's file calls are synchronous):
 *
 * - `put <meet> <file>`: a put-back writing the file's content (as it is at the start) again and
 *   again, as a restore does, until the other side is done; prints how often that failed;
 * - `cycle <meet> <dir> <file>`: a command that changes nothing, again and again (for 1.5 s and at
 *   least 200 times): its snapshot of `dir` and its restore. Prints how often the restore changed
 *   something and how often `file` was missing after it.
 *
 * Each side marks itself ready in the directory `meet` once loaded and starts when both are:
 * loading takes seconds on a busy machine, and the two must overlap.
 */
import { existsSync, lstatSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { put, ProtectedSnapshot } from '../../../../src/tools/sandbox/protected-snapshot.js';

const [role, meet, first, second] = process.argv.slice(2) as [string, string, string, string | undefined];
writeFileSync(join(meet, role), '');
// Neither side outlives the test, whatever happens to the other.
const giveUp = Date.now() + 40_000;
while ((!existsSync(join(meet, 'put')) || !existsSync(join(meet, 'cycle'))) && Date.now() < giveUp) await new Promise((resolve) => setTimeout(resolve, 5));
const done = join(meet, 'done');
if (role === 'put') {
  const content = readFileSync(first);
  let puts = 0;
  let failed = 0;
  while (!existsSync(done) && Date.now() < giveUp) {
    try {
      put(first, { kind: 'file', mode: 0o755, signature: '', content });
    } catch {
      failed++; // "could not be restored", as the tool result would say
    }
    puts++;
  }
  process.stdout.write(JSON.stringify({ puts, failed }));
} else {
  let cycles = 0;
  let restores = 0;
  let missing = 0;
  const until = Date.now() + 1500;
  try {
    while ((Date.now() < until || cycles < 200) && Date.now() < giveUp) {
      if (ProtectedSnapshot.take([first]).restore().length > 0) restores++;
      if (lstatSync(second as string, { throwIfNoEntry: false }) === undefined) missing++;
      cycles++;
    }
  } finally {
    writeFileSync(done, '');
  }
  process.stdout.write(JSON.stringify({ cycles, restores, missing }));
}
