import type { FastifySchemaValidationError } from 'fastify';
import type { ValidationErrorResponse } from '@mada/protocol';

type Issue = ValidationErrorResponse['detail'][number];
type Params = Record<string, unknown>;

/** Where Fastify found the bad value, named as FastAPI names it. */
const LOCATION: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

function pathOf(instancePath: string): string[] {
  return instancePath
    .split('/')
    .filter((part) => part !== '')
    .map((part) => decodeURIComponent(part));
}

function describe(code: string, message: string, params: Params): Pick<Issue, 'msg' | 'type'> {
  const expected = typeof params.expected === 'string' ? params.expected : '';
  const origin = typeof params.origin === 'string' ? params.origin : '';
  if (code === 'invalid_type' && message.includes('received undefined')) return { type: 'missing', msg: 'Field required' };
  if (code === 'invalid_type') return { type: `${expected}_type`, msg: `Input should be a valid ${expected}` };
  if (code === 'too_small' && origin === 'string') {
    return { type: 'string_too_short', msg: `String should have at least ${String(params.minimum)} character${params.minimum === 1 ? '' : 's'}` };
  }
  if (code === 'too_big' && origin === 'string') {
    return { type: 'string_too_long', msg: `String should have at most ${String(params.maximum)} characters` };
  }
  if (code === 'too_small') return { type: 'greater_than_equal', msg: `Input should be greater than or equal to ${String(params.minimum)}` };
  if (code === 'too_big') return { type: 'less_than_equal', msg: `Input should be less than or equal to ${String(params.maximum)}` };
  if (code === 'invalid_value' && Array.isArray(params.values)) {
    const values = params.values.map((v) => `'${String(v)}'`);
    const listed = values.length > 1 ? `${values.slice(0, -1).join(', ')} or ${values.at(-1) ?? ''}` : (values[0] ?? '');
    return { type: 'enum', msg: `Input should be ${listed}` };
  }
  if (code === 'unrecognized_keys') return { type: 'extra_forbidden', msg: 'Extra inputs are not permitted' };
  return { type: 'value_error', msg: message };
}

/** Fastify's (zod-produced) validation errors in FastAPI's 422 shape. */
export function toValidationDetail(errors: FastifySchemaValidationError[], context: string | undefined): Issue[] {
  const location = LOCATION[context ?? 'body'] ?? context ?? 'body';
  return errors.map((error) => {
    const params = (error.params ?? {}) as Params;
    const code = typeof error.keyword === 'string' ? error.keyword : 'value_error';
    return { loc: [location, ...pathOf(error.instancePath)], ...describe(code, error.message ?? 'Invalid input', params) };
  });
}

export const missingBody = (): Issue[] => [{ loc: ['body'], msg: 'Field required', type: 'missing' }];
export const invalidJson = (message: string): Issue[] => [{ loc: ['body'], msg: `JSON decode error: ${message}`, type: 'json_invalid' }];

/**
 * A query value that passed its schema but names nothing (an unknown id): a 422 of the same shape
 * as the schema's own, raised through Fastify's validation path so error-handler.ts maps it.
 */
export function queryValidationError(field: string, message: string): Error {
  const validation: FastifySchemaValidationError[] = [{ keyword: 'value_error', instancePath: `/${field}`, schemaPath: '', params: {}, message }];
  return Object.assign(new Error(message), { code: 'FST_ERR_VALIDATION', statusCode: 422, validation, validationContext: 'querystring' });
}
