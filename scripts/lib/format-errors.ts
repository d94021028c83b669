import type { ErrorObject } from 'ajv/dist/2020.js';

/** One reportable problem: where in the document (a JSON pointer, "" for the root) and what. */
export interface Problem {
  pointer: string;
  message: string;
  /** The JSON Schema keyword that failed; absent for problems that are not schema errors. */
  keyword?: string;
}

const quoteList = (values: unknown): string =>
  Array.isArray(values) ? values.map((v) => JSON.stringify(v)).join(', ') : String(values);

/** Ajv's messages leave out the detail a writer needs to fix the file; add it back. */
function describe(error: ErrorObject): string {
  const message = error.message ?? error.keyword;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      return `${message}: "${String(params.additionalProperty)}"`;
    case 'enum':
      return `${message}: ${quoteList(params.allowedValues)}`;
    case 'false schema':
      // The schemas use `false` only to forbid a property in some condition (npc-profile).
      return 'must NOT be present here';
    default:
      return message;
  }
}

export function toProblems(errors: readonly ErrorObject[] | null | undefined): Problem[] {
  return (errors ?? []).map((error) => ({ pointer: error.instancePath, message: describe(error), keyword: error.keyword }));
}
