import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type AnySchemaObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

/** The repository's schemas/ directory, found from this file so any working directory works. */
export const SCHEMA_DIR = fileURLToPath(new URL('../../schemas/', import.meta.url));

const SUFFIX = '.schema.json';
/** Holds shared $defs only; no data file is ever validated against it. */
const SHARED = 'common';

export interface SchemaRegistry {
  /** Names of the schemas data files can be validated against, e.g. district, npc-profile. */
  readonly names: readonly string[];
  /** The parsed schema documents by name, the shared one included. */
  readonly documents: ReadonlyMap<string, AnySchemaObject>;
  validator(name: string): ValidateFunction;
}

// ajv-formats is CommonJS: under Node's ESM loader its default export is module.exports, which
// TypeScript types as the namespace; the plugin is that object or its default member.
const addFormats = ((formats as { default?: unknown }).default ?? formats) as (ajv: Ajv2020) => Ajv2020;

/**
 * allErrors: a writer fixing a data file wants every problem at once, not one per run.
 * Strict mode catches schema mistakes (unknown keywords, a minItems without its type) except
 * strictRequired, which would reject the idiomatic `then: { required: [...] }` whose properties
 * are declared one level up.
 */
export function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
  addFormats(ajv);
  return ajv;
}

function readDocuments(dir: string): Map<string, AnySchemaObject> {
  const documents = new Map<string, AnySchemaObject>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith(SUFFIX)).sort()) {
    documents.set(file.slice(0, -SUFFIX.length), JSON.parse(readFileSync(join(dir, file), 'utf8')) as AnySchemaObject);
  }
  return documents;
}

export function loadSchemaRegistry(dir: string = SCHEMA_DIR): SchemaRegistry {
  const documents = readDocuments(dir);
  const ajv = createAjv();
  for (const document of documents.values()) ajv.addSchema(document);
  const names = [...documents.keys()].filter((name) => name !== SHARED);
  return {
    names,
    documents,
    validator(name) {
      const id = documents.get(name)?.$id;
      const validate = id === undefined || name === SHARED ? undefined : ajv.getSchema(id);
      if (!validate) throw new Error(`Unknown schema "${name}" (known: ${names.join(', ')})`);
      return validate;
    },
  };
}
