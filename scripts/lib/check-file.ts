import { readFileSync } from 'node:fs';
import { toProblems, type Problem } from './format-errors.js';
import type { SchemaRegistry } from './schema-registry.js';

export interface FileReport {
  file: string;
  /** The schema the file was checked against; absent when none could be chosen. */
  schema?: string;
  /** Empty when the file is valid. */
  problems: Problem[];
}

const fileProblem = (message: string): Problem[] => [{ pointer: '', message }];

/** V8 reports a byte offset; an editor wants a line and a column. */
function withLineAndColumn(message: string, text: string): string {
  const position = /at position (\d+)/.exec(message);
  if (!position) return message;
  const before = text.slice(0, Number(position[1]));
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return `${message} (line ${line}, column ${column})`;
}

function readJson(file: string): { value: unknown } | { problems: Problem[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return { problems: fileProblem(`cannot read file: ${(error as Error).message}`) };
  }
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    return { problems: fileProblem(`not valid JSON: ${withLineAndColumn((error as Error).message, text)}`) };
  }
}

/** Reads, parses and validates one file; every failure becomes problems, nothing throws. */
export function checkFile(file: string, schema: string | undefined, registry: SchemaRegistry): FileReport {
  if (schema === undefined) {
    const hint = `name it *.<schema>.json, put it under a directory named after the schema, or pass --schema`;
    return { file, problems: fileProblem(`no schema applies (${hint}; schemas: ${registry.names.join(', ')})`) };
  }
  const parsed = readJson(file);
  if ('problems' in parsed) return { file, schema, problems: parsed.problems };
  const validate = registry.validator(schema);
  return { file, schema, problems: validate(parsed.value) ? [] : toProblems(validate.errors) };
}
