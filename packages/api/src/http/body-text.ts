import type { FastifyInstance } from 'fastify';
import { InvalidInputError, type InputIssue } from '../errors.js';

const NUL = '\u0000';

/** No request body the API takes nests past one or two levels; the walks below recurse this deep at most. */
export const MAX_BODY_DEPTH = 32;

/**
 * Whether `value` nests arrays or objects more than `max` levels deep, found without recursion:
 * JSON.parse builds bodies nested hundreds of thousands of levels deep, which a recursive walk
 * answers with a stack overflow (500) after copying its path at every level.
 */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (item === null || typeof item !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

/** The path of the first string holding U+0000, walking the parsed body depth first. */
function findNul(value: unknown, path: (string | number)[]): (string | number)[] | null {
  if (typeof value === 'string') return value.includes(NUL) ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i], [...path, i]);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const found = (key.includes(NUL) ? [...path, key] : null) ?? findNul(item, [...path, key]);
      if (found) return found;
    }
  }
  return null;
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
 * is refused (422) on either database; a lone UTF-16 surrogate half (valid in JSON, not in UTF-8)
 * becomes U+FFFD before anything counts, stores or runs it. A body nested deeper than
 * MAX_BODY_DEPTH is refused (422) before either walk.
 */
export function normalizeBodyText(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined || request.body === null) return;
    if (nestedDeeperThan(request.body, MAX_BODY_DEPTH)) {
      const issue: InputIssue = { loc: ['body'], msg: `Body should be nested at most ${MAX_BODY_DEPTH} levels deep`, type: 'too_deep' };
      throw new InvalidInputError([issue]);
    }
    const at = findNul(request.body, ['body']);
    if (at) {
      const issue: InputIssue = { loc: at, msg: 'String should not contain NUL characters (U+0000)', type: 'string_nul' };
      throw new InvalidInputError([issue]);
    }
    request.body = wellFormed(request.body);
  });
}
