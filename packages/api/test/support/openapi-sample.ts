/** The parts of the service's OpenAPI document the tests read. */
export type Schema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  examples?: unknown[];
  example?: unknown;
  default?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  items?: Schema;
};

export interface SchemaHolder {
  components?: { schemas?: Record<string, Schema> };
}

export const resolve = (schema: Schema, document: SchemaHolder): Schema =>
  schema.$ref ? resolve(document.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')] ?? {}, document) : schema;

/**
 * The value the docs page's "Try it out" fills in for a schema, as Swagger UI picks it: an
 * example, else the default, else the first enum value, else a placeholder of the type ("string").
 */
export function sample(schema: Schema, document: SchemaHolder): unknown {
  const s = resolve(schema, document);
  if (s.examples?.length) return s.examples[0];
  if (s.example !== undefined) return s.example;
  if (s.default !== undefined) return s.default;
  if (s.enum?.length) return s.enum[0];
  if (s.anyOf) return sample(s.anyOf[0]!, document);
  if (s.properties) return Object.fromEntries(Object.entries(s.properties).map(([name, property]) => [name, sample(property, document)]));
  if (s.type === 'array') return [sample(s.items ?? {}, document)];
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  return { string: 'string', integer: 0, number: 0, boolean: true, null: null }[type ?? 'string'];
}
