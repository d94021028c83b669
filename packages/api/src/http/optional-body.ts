import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { InvalidInputError } from '../errors.js';
import { missingBody } from './validation-error.js';

/** Whether a body schema takes `{}`: every field it documents is optional (or has a default). */
const takesEmptyObject = new WeakMap<z.ZodType, boolean>();

function acceptsEmptyObject(schema: z.ZodType): boolean {
  let accepts = takesEmptyObject.get(schema);
  if (accepts === undefined) {
    accepts = schema.safeParse({}).success;
    takesEmptyObject.set(schema, accepts);
  }
  return accepts;
}

/**
 * A route whose documented body fields are all optional takes no body at all, an empty one or
 * `{}` alike: clients (curl, the docs page's "Try it out") send any of the three. A route with a
 * required field still answers a missing body with 422 `Field required`, as before.
 */
export function allowOmittedBodies(app: FastifyInstance): void {
  // Fastify's JSON parser (with its prototype-poisoning checks) for every non-blank body; a blank
  // one is no body, which the hook below and the route's schema then judge.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    void parseJson(request, text, done);
  });
  app.addHook('preValidation', async (request) => {
    const schema = request.routeOptions.schema?.body;
    if (request.body !== undefined || !(schema instanceof z.ZodType)) return;
    // Fastify would validate `null` in its place, and answer "Input should be a valid object".
    if (!acceptsEmptyObject(schema)) throw new InvalidInputError(missingBody());
    request.body = {};
  });
}
