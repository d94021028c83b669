/**
 * `npm run bench [-- name-filter]`: runs every bench/*.bench.ts and prints each result as a
 * ratio to the baseline measured in the same run.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Bench, BenchResult } from './harness.js';

const dir = fileURLToPath(new URL('.', import.meta.url));
const filter = process.argv[2] ?? '';
const files = readdirSync(dir)
  .filter((file) => file.endsWith('.bench.ts') && file.includes(filter))
  .sort();

const formatAbsolute = (r: BenchResult): string => {
  const unit = ` ${r.unit ?? ''}`;
  const verdict = r.target === undefined ? '' : `  (target < ${r.target}${unit}: ${r.ratio < r.target ? 'met' : 'MISSED'})`;
  return `${r.name}\n    ${r.subjectMs.toFixed(1)}${unit} vs ${r.baseline} ${r.baselineMs.toFixed(1)}${unit}${verdict}${r.note ? `\n    ${r.note}` : ''}`;
};

const format = (r: BenchResult): string => {
  if (r.kind === 'absolute') return formatAbsolute(r);
  const unit = r.kind === 'overhead' ? ' ms' : '';
  const verdict = r.target === undefined ? '' : `  (target <= ${r.target}${unit}: ${r.ratio <= r.target ? 'met' : 'MISSED'})`;
  const figure = r.kind === 'overhead' ? `overhead ${r.ratio.toFixed(3)} ms` : `ratio ${r.ratio.toFixed(2)}`;
  return `${r.name}\n    ${r.subjectMs.toFixed(3)} ms vs ${r.baseline} ${r.baselineMs.toFixed(3)} ms -> ${figure}${verdict}${r.note ? `\n    ${r.note}` : ''}`;
};

let missed = 0;
for (const file of files) {
  const bench = ((await import(pathToFileURL(`${dir}/${file}`).href)) as { default: Bench }).default;
  console.log(`\n# ${file}`);
  for (const r of await bench()) {
    console.log(format(r));
    if (r.target !== undefined && (r.kind === 'absolute' ? r.ratio >= r.target : r.ratio > r.target)) missed++;
  }
}
console.log(missed === 0 ? '\nall targets met' : `\n${missed} target(s) missed`);
