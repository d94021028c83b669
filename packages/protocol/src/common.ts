import { z } from 'zod';

/** Body of every non-validation error: `{"detail": "..."}`. */
export const ErrorResponse = z.object({ detail: z.string() }).meta({ id: 'ErrorResponse' });
export type ErrorResponse = z.infer<typeof ErrorResponse>;

/** FastAPI's validation error shape, kept so clients of the original service keep working. */
export const ValidationIssue = z.object({
  loc: z.array(z.union([z.string(), z.number()])),
  msg: z.string(),
  type: z.string(),
});
export const ValidationErrorResponse = z
  .object({ detail: z.array(ValidationIssue) })
  .meta({ id: 'ValidationErrorResponse' });
export type ValidationErrorResponse = z.infer<typeof ValidationErrorResponse>;

export const RootResponse = z
  .object({ name: z.string(), version: z.string(), status: z.literal('ok'), docs: z.string() })
  .meta({ id: 'RootResponse' });
export type RootResponse = z.infer<typeof RootResponse>;

/** The model as the runtime last described it. */
export const ModelInfo = z
  .object({
    name: z.string(),
    /** Tokens per request, answer included: the smallest of the runtime's window and LLM_NUM_CTX. */
    context_window: z.number().int(),
    /** `native`: the runtime's `tools` field; `text`: tools described in the prompt, calls read from the text. */
    tool_calls: z.enum(['native', 'text']),
  })
  .meta({ id: 'ModelInfo' });
export type ModelInfo = z.infer<typeof ModelInfo>;

/** One model users may choose (LLM_MODELS), as the runtime last described it. */
export const ModelEntry = ModelInfo.extend({
  /** LLM_MODEL: the model of runs and conversations that name none. */
  default: z.boolean(),
  /** False when the runtime said it does not have the model: runs sent to it fail. */
  available: z.boolean(),
}).meta({ id: 'ModelEntry' });
export type ModelEntry = z.infer<typeof ModelEntry>;

export const ModelListResponse = z.object({ models: z.array(ModelEntry) }).meta({ id: 'ModelListResponse' });
export type ModelListResponse = z.infer<typeof ModelListResponse>;

/**
 * `shared`: users reach the same ALLOWED_PATHS, so each user's agents can read and change the
 * others' files (version 1.1 behaviour); `per_user`: each user has a workspace of their own.
 */
export const Tenancy = z.enum(['shared', 'per_user']).meta({ id: 'Tenancy' });
export type Tenancy = z.infer<typeof Tenancy>;

export const HealthResponse = z
  .object({
    status: z.enum(['healthy', 'degraded', 'unhealthy']),
    version: z.string(),
    checks: z.record(z.string(), z.string()),
    model: ModelInfo.optional(),
    /** Configured models the runtime said it does not have, with its reason. */
    missing_models: z.array(z.object({ name: z.string(), reason: z.string() })).optional(),
    // Optional for clients of services from before it: every service since sends it.
    tenancy: Tenancy.optional(),
  })
  .meta({ id: 'HealthResponse' });
export type HealthResponse = z.infer<typeof HealthResponse>;
