import type { FastifyInstance } from 'fastify';

/** One method of one registered route, e.g. `GET /runs/:run_id`. */
export type RouteKey = `${string} ${string}`;

// A node without handlers of its own (a shared prefix) has no method list.
const LINE = /^((?:[│ ] {3})*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/u;

/**
 * Every method and path the app registers, read from Fastify's own route tree, so a route added
 * later shows up without anyone listing it.
 */
export function registeredRoutes(app: FastifyInstance): RouteKey[] {
  const prefixes: string[] = [];
  const routes: RouteKey[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = LINE.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    const path = (prefixes[depth - 1] ?? '') + match[2]!;
    prefixes[depth] = path;
    prefixes.length = depth + 1;
    for (const method of match[3]?.split(', ') ?? []) routes.push(`${method} ${path}`);
  }
  return [...new Set(routes)].sort();
}
