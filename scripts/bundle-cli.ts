/**
 * Bundles the terminal client into one file for publishing: packages/cli/dist/mada.js, with its
 * dependencies and @mada/protocol inside, and dist/THIRD-PARTY-NOTICES.md beside it. `npm pack`
 * and `npm publish` run it (the client's prepack script), so the package installs with no
 * dependencies to fetch.
 *
 *   tsx scripts/bundle-cli.ts
 */
import { writeFileSync } from 'node:fs';
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { thirdPartyNotices } from './lib/third-party-notices.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = (path: string): string => fileURLToPath(new URL(`../packages/cli/${path}`, import.meta.url));

const result = await build({
  absWorkingDir: root,
  entryPoints: [cli('src/main.ts')],
  outfile: cli('dist/mada.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // The sibling workspace packages are taken from their sources: no prior build needed.
  conditions: ['mada-source'],
  // Some bundled CommonJS modules call require() for Node's built-ins, which an ES module lacks.
  banner: { js: "import { createRequire as madaCreateRequire } from 'node:module';\nconst require = madaCreateRequire(import.meta.url);" },
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
});
writeFileSync(cli('dist/THIRD-PARTY-NOTICES.md'), thirdPartyNotices(root, Object.keys(result.metafile.inputs), 'dist/mada.js'));
console.error(`bundled ${Object.keys(result.metafile.inputs).length} modules into packages/cli/dist/mada.js`);
