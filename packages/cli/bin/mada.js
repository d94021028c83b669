#!/usr/bin/env node
// The `mada` command. This file is committed, so npm links it at install time, before anything
// is built (a bin pointing into dist/ is skipped by `npm ci` and `npx mada` then finds nothing).
//
// What it runs:
//   dist/main.js  in a checkout of the repository, the client `npm run build` compiled;
//   src/main.ts   in a checkout where nothing is built yet, the sources through tsx;
//   dist/mada.js  in a published package (which has no src/), its self-contained bundle.
import { existsSync } from 'node:fs';
import { register } from 'node:module';
import process from 'node:process';
import { URL } from 'node:url';

const here = (path) => new URL(`../${path}`, import.meta.url);

async function runSources() {
  let tsx;
  try {
    tsx = await import('tsx/esm/api');
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    process.stderr.write('mada: the client is not built and tsx is not installed; run `npm ci && npm run build` at the repository root\n');
    process.exit(1);
  }
  // Sibling workspace packages then resolve to their TypeScript sources as well.
  const sourceCondition =
    'export const resolve = (specifier, context, next) => ' +
    "next(specifier, { ...context, conditions: [...context.conditions, 'mada-source'] });";
  register(`data:text/javascript,${encodeURIComponent(sourceCondition)}`);
  tsx.register();
  await import(here('src/main.ts').href);
}

if (existsSync(here('dist/main.js'))) await import(here('dist/main.js').href);
else if (existsSync(here('src/main.ts'))) await runSources();
else await import(here('dist/mada.js').href);
