import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ModelListResponse, type ModelEntry, type ModelInfo } from '@mada/protocol';
import type { ModelCatalogue, RuntimeInfo } from '../../model/index.js';

export const toModelInfo = (info: RuntimeInfo): ModelInfo => ({ name: info.name, context_window: info.contextWindow, tool_calls: info.toolCalls });

/** Each configured model as the runtime last described it; no request to the runtime here. */
export function modelEntries(models: ModelCatalogue): ModelEntry[] {
  return models.all().map((model) => {
    const info = model.runtime.current();
    return { ...toModelInfo(info), name: model.name, default: model.name === models.defaultName, available: info.missing === undefined };
  });
}

export const modelRoutes: FastifyPluginAsyncZod<{ models: ModelCatalogue }> = async (app, { models }) => {
  app.get(
    '/models',
    {
      schema: {
        tags: ['models'],
        security: [{ ApiKey: [] }],
        summary: 'The models runs and conversations may name',
        description: [
          'LLM_MODELS, LLM_MODEL first and `default`. Each as the runtime last described it (asked at start-up and every 5 minutes):',
          'its context window and whether tools go in the `tools` field (`native`) or in the prompt (`text`).',
          '`available` is false when the runtime said it does not have the model; runs sent to it fail with its reason.',
        ].join(' '),
        response: { 200: ModelListResponse },
      },
    },
    async () => ({ models: modelEntries(models) }),
  );
};
