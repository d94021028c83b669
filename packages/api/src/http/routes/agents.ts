import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { AgentInfo, AgentListResponse, AgentTypeParams, ErrorResponse } from '@mada/protocol';
import { AGENT_CATALOGUE, findAgentInfo } from '../../agents/catalogue.js';
import { NotFoundError } from '../../errors.js';

export const agentCatalogueRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/agents/',
    { schema: { tags: ['agents'], summary: 'List the agents', response: { 200: AgentListResponse } } },
    async () => ({ agents: Object.values(AGENT_CATALOGUE) }),
  );

  app.get(
    '/agents/:agent_type',
    {
      schema: {
        tags: ['agents'],
        summary: 'Describe one agent',
        params: AgentTypeParams,
        response: { 200: AgentInfo, 404: ErrorResponse },
      },
    },
    async (request) => {
      const info = findAgentInfo(request.params.agent_type);
      if (!info) throw new NotFoundError(`Agent not found: ${request.params.agent_type}`);
      return info;
    },
  );
};
