import type { FastifyInstance } from 'fastify';
import { InvalidInputError, type InputIssue } from '../errors.js';

const NUL = '\u0000';

/** No request body the API takes nests past one or two levels; the rebuild below recurses this deep at most. */
export const MAX_BODY_DEPTH = 32;

type Key = string | number;

/** An array or object met in the walk, with the way back to the body's root (for a field's path). */
interface Container {
  value: object;
  depth: number;
  parent: Container | undefined;
  key: Key;
}

interface BodyScan {
  tooDeep: boolean;
  /** The path of a string (or key) holding U+0000; null when none does. */
  nulAt: Key[] | null;
  /** Some string or key holds a lone surrogate half. */
  illFormed: boolean;
}

const pathTo = (container: Container, key: Key): Key[] => {
  const path = [key];
  for (let c: Container | undefined = container; c !== undefined; c = c.parent) path.unshift(c.key);
  return path;
};

/**
 * Everything the hook needs to know of a body, in one walk without recursion (JSON.parse builds
 * bodies nested hundreds of thousands of levels deep, which a recursive walk answers with a stack
 * overflow) and without an allocation per scalar: a 2 MB body of small values held the event loop
 * for a tenth of a second when three walks each copied a path for every value and rebuilt the body.
 */
function scanBody(body: object): BodyScan {
  const scan: BodyScan = { tooDeep: false, nulAt: null, illFormed: false };
  const look = (text: string, at: Container, key: Key): void => {
    if (scan.nulAt === null && text.includes(NUL)) scan.nulAt = pathTo(at, key);
    if (!scan.illFormed && !text.isWellFormed()) scan.illFormed = true;
  };
  const visit = (item: unknown, at: Container, key: Key, pending: Container[]): void => {
    if (typeof item === 'string') look(item, at, key);
    else if (item !== null && typeof item === 'object') pending.push({ value: item, depth: at.depth + 1, parent: at, key });
  };
  const pending: Container[] = [{ value: body, depth: 0, parent: undefined, key: 'body' }];
  for (let at = pending.pop(); at !== undefined; at = pending.pop()) {
    if (at.depth >= MAX_BODY_DEPTH) return { ...scan, tooDeep: true };
    if (Array.isArray(at.value)) {
      const items = at.value as unknown[];
      for (let i = 0; i < items.length; i++) visit(items[i], at, i, pending);
    } else {
      for (const [key, item] of Object.entries(at.value)) {
        look(key, at, key);
        visit(item, at, key, pending);
      }
    }
  }
  return scan;
}

/** Every string with a lone surrogate half made well-formed: each lone half becomes U+FFFD. */
function wellFormed(value: unknown): unknown {
  if (typeof value === 'string') return value.isWellFormed() ? value : value.toWellFormed();
  if (Array.isArray(value)) return value.map(wellFormed);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key.toWellFormed(), wellFormed(item)]));
  }
  return value;
}

/**
 * Text both databases store the same way. PostgreSQL cannot store U+0000 in text at all, so it
 * is refused (422) on either database, in a body and in a query string; a lone UTF-16 surrogate half (valid in JSON, not in UTF-8)
 * becomes U+FFFD before anything counts, stores or runs it. A body nested deeper than
 * MAX_BODY_DEPTH is refused (422) before either walk.
 */
export function normalizeBodyText(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    // A query value reaches the store as a body's does (GET /audit?actor=): PostgreSQL failed on U+0000 there with a 500.
    const nulInQuery = queryNameWithNul(request.query);
    if (nulInQuery !== undefined) throw nulIn(['query', nulInQuery]);
    const body: unknown = request.body;
    if (typeof body === 'string' && body.includes(NUL)) throw nulIn(['body']);
    if (body === undefined || body === null || typeof body !== 'object') {
      if (typeof body === 'string') request.body = body.toWellFormed();
      return;
    }
    const scan = scanBody(body);
    if (scan.tooDeep) {
      const issue: InputIssue = { loc: ['body'], msg: `Body should be nested at most ${MAX_BODY_DEPTH} levels deep`, type: 'too_deep' };
      throw new InvalidInputError([issue]);
    }
    if (scan.nulAt) throw nulIn(scan.nulAt);
    // Rare (a lone surrogate is invalid Unicode): only then is the body rebuilt, at most MAX_BODY_DEPTH deep.
    if (scan.illFormed) request.body = wellFormed(body);
  });
}

/** The first query parameter whose name or value (any of a repeated one's) holds U+0000. */
function queryNameWithNul(query: unknown): string | undefined {
  if (query === null || typeof query !== 'object') return undefined;
  for (const [name, value] of Object.entries(query)) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (name.includes(NUL) || values.some((item) => typeof item === 'string' && item.includes(NUL))) return name;
  }
  return undefined;
}

const nulIn = (loc: Key[]): InvalidInputError => new InvalidInputError([{ loc, msg: 'String should not contain NUL characters (U+0000)', type: 'string_nul' }]);
