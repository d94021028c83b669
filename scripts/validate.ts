/**
 * Validates world-data JSON files against the schemas in schemas/.
 *
 *   npm run validate -- [--schema <name>] <file or directory>...
 *
 * Exit status: 0 every file valid, 1 some file invalid or unreadable, 2 usage error.
 * The schema-selection rule is in lib/schema-selection.ts and schemas/README.md.
 */
import { relative, isAbsolute } from 'node:path';
import { parseArgs } from 'node:util';
import { checkFile, type FileReport } from './lib/check-file.js';
import { collectJsonFiles } from './lib/json-files.js';
import { loadSchemaRegistry, type SchemaRegistry } from './lib/schema-registry.js';
import { selectSchema } from './lib/schema-selection.js';

const USAGE = 'usage: npm run validate -- [--schema <name>] <file or directory>...';

class UsageError extends Error {}

interface Invocation {
  paths: string[];
  schema?: string;
}

function parseInvocation(args: string[], registry: SchemaRegistry): Invocation | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: { schema: { type: 'string', short: 's' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (parsed.values.help) return 'help';
  const schema = parsed.values.schema;
  if (schema !== undefined && !registry.names.includes(schema)) {
    throw new UsageError(`unknown schema "${schema}" (schemas: ${registry.names.join(', ')})`);
  }
  if (parsed.positionals.length === 0) throw new UsageError('no files or directories given');
  return { paths: parsed.positionals, ...(schema !== undefined ? { schema } : {}) };
}

/** Paths under the working directory print relative, the way the user typed them. */
function display(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? file : rel;
}

function print(report: FileReport): void {
  const file = display(report.file);
  if (report.problems.length === 0) {
    console.log(`ok ${file} (${report.schema})`);
    return;
  }
  for (const problem of report.problems) {
    const where = report.schema === undefined || problem.keyword === undefined ? '' : `${problem.pointer || '(root)'}: `;
    const keyword = problem.keyword === undefined ? '' : ` [${problem.keyword}]`;
    console.log(`${file}: ${where}${problem.message}${keyword}`);
  }
}

function run(args: string[]): number {
  const registry = loadSchemaRegistry();
  const invocation = parseInvocation(args, registry);
  if (invocation === 'help') {
    console.log(`${USAGE}\nschemas: ${registry.names.join(', ')}`);
    return 0;
  }
  const { files, missing } = collectJsonFiles(invocation.paths);
  if (missing.length > 0) throw new UsageError(`no such file or directory: ${missing.join(', ')}`);
  if (files.length === 0) throw new UsageError(`no JSON files found in ${invocation.paths.join(', ')}`);

  const reports = files.map((file) => checkFile(file, selectSchema(file, registry.names, invocation.schema), registry));
  reports.forEach(print);
  const invalid = reports.filter((r) => r.problems.length > 0).length;
  console.log(`${files.length} file${files.length === 1 ? '' : 's'} checked: ${files.length - invalid} valid, ${invalid} invalid`);
  return invalid === 0 ? 0 : 1;
}

// npm runs scripts from the package root; the paths were typed relative to where npm was run.
if (process.env.INIT_CWD) process.chdir(process.env.INIT_CWD);

try {
  process.exitCode = run(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  console.error(`validate: ${error.message}\n${USAGE}`);
  process.exitCode = 2;
}
