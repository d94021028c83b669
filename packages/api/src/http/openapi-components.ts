/**
 * Tidies the OpenAPI document fastify-type-provider-zod generates. It names every registered zod
 * schema twice, `X` (as the service sends it) and `XInput` (as a client may send it, defaults
 * optional), and lists both whether a route uses them or not: the docs page showed every schema
 * twice. Here a schema no route reaches is dropped, an `XInput` equal to its `X` is merged into
 * it, and an `XInput` whose `X` no route uses takes the plain name. Both stay only when a route
 * sends one shape and takes another under the same name.
 */

type Json = unknown;
type Schemas = Record<string, Json>;

const PREFIX = '#/components/schemas/';
const INPUT = 'Input';

/** Every `$ref` target in `value`, by component name. */
function refsIn(value: Json, found: Set<string>): void {
  // An explicit stack: the document is the service's own, but its depth is not bounded by a type.
  const pending: Json[] = [value];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (Array.isArray(node)) pending.push(...(node as Json[]));
    else if (node !== null && typeof node === 'object') {
      for (const [key, item] of Object.entries(node)) {
        if (key === '$ref' && typeof item === 'string' && item.startsWith(PREFIX)) found.add(item.slice(PREFIX.length));
        else pending.push(item);
      }
    }
  }
}

/** The components `roots` reach, following references between components. */
function reachable(roots: Json, schemas: Schemas): Set<string> {
  const seen = new Set<string>();
  const frontier = new Set<string>();
  refsIn(roots, frontier);
  while (frontier.size > 0) {
    const [name] = frontier;
    frontier.delete(name!);
    if (seen.has(name!) || !(name! in schemas)) continue;
    seen.add(name!);
    refsIn(schemas[name!], frontier);
  }
  return seen;
}

/** `value` with every reference renamed by `names`. */
function renamed(value: Json, names: Map<string, string>): Json {
  return JSON.parse(JSON.stringify(value), (key, item: Json) => {
    if (key !== '$ref' || typeof item !== 'string' || !item.startsWith(PREFIX)) return item;
    return PREFIX + (names.get(item.slice(PREFIX.length)) ?? item.slice(PREFIX.length));
  }) as Json;
}

export function oneSchemaPerShape<T extends { paths?: Json; components?: { schemas?: Schemas } }>(document: T): T {
  const all = document.components?.schemas;
  if (!all) return document;
  const used = reachable(document.paths, all);
  const schemas: Schemas = Object.fromEntries(Object.entries(all).filter(([name]) => used.has(name)));
  const pairs = Object.keys(schemas).filter((name) => name.endsWith(INPUT) && name.slice(0, -INPUT.length) in schemas);
  const names = new Map<string, string>();
  // Equal once the pairs already merged are renamed: a pair is merged only if what it refers to is too.
  for (let merged = true; merged; ) {
    merged = false;
    for (const input of pairs) {
      const output = input.slice(0, -INPUT.length);
      if (names.has(input) || JSON.stringify(renamed(schemas[input], names)) !== JSON.stringify(renamed(schemas[output], names))) continue;
      names.set(input, output);
      merged = true;
    }
  }
  for (const name of Object.keys(schemas)) {
    const plain = name.slice(0, -INPUT.length);
    if (name.endsWith(INPUT) && !(plain in schemas)) names.set(name, plain);
  }
  const tidied: Schemas = {};
  for (const [name, schema] of Object.entries(schemas)) {
    const target = names.get(name) ?? name;
    if (!(target in tidied) || target === name) tidied[target] = renamed(schema, names);
  }
  return { ...document, paths: renamed(document.paths, names), components: { ...document.components, schemas: tidied } };
}
