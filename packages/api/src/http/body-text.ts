import type { FastifyInstance } from 'fastify';
import { InvalidInputError, type InputIssue } from '../errors.js';

const NUL = '\u0000';

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
 * becomes U+FFFD before anything counts, stores or runs it.
 */
export function normalizeBodyText(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined || request.body === null) return;
    const at = findNul(request.body, ['body']);
    if (at) {
      const issue: InputIssue = { loc: at, msg: 'String should not contain NUL characters (U+0000)', type: 'string_nul' };
      throw new InvalidInputError([issue]);
    }
    request.body = wellFormed(request.body);
  });
}
