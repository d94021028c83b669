import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { AgentRunRequest, AgentRunResponse, ErrorResponse, StreamFrame, ValidationErrorResponse } from '@mada/protocol';
import type { AgentEngine } from '../../agents/engine.js';
import { abortOnClientGone } from '../client-gone.js';
import { SseStream } from '../sse.js';

export interface AgentRunRoutesOptions {
  engine: AgentEngine;
  pingIntervalMs?: number;
}

const tags = ['agents'];
const security = [{ ApiKey: [] }];
const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export const agentRunRoutes: FastifyPluginAsyncZod<AgentRunRoutesOptions> = async (app, { engine, pingIntervalMs }) => {
  app.post(
    '/agents/run',
    {
      schema: {
        tags,
        security,
        summary: 'Run an agent to completion (blocking)',
        description: 'Failures during the run answer 200 with `success: false`, an empty `response` and `error`.',
        body: AgentRunRequest,
        response: { 200: AgentRunResponse, 400: ErrorResponse, 422: ValidationErrorResponse },
      },
    },
    async (request, reply) => {
      const { agent_type, prompt, working_dir, mode } = request.body;
      engine.agent(agent_type);
      engine.workingDirectory(working_dir);
      const signal = abortOnClientGone(reply);
      try {
        const response = await engine.run({ agentType: agent_type, prompt, workingDir: working_dir, mode, signal, streaming: false });
        return { response, agent_type, mode, success: true };
      } catch (error) {
        return { response: '', agent_type, mode, success: false, error: messageOf(error) };
      }
    },
  );

  app.post(
    '/agents/stream',
    {
      schema: {
        tags,
        security,
        summary: 'Run an agent and stream its progress as Server-Sent Events',
        description: [
          'Each frame is `data: <JSON>` and a blank line: StreamEvent objects (`tool_start`, `tool_done`, `thinking`,',
          '`response`, `error`, `done`) and, from explore and plan, legacy `{"event":"chunk","data":"..."}` text frames.',
          'Every stream ends with `done` (carrying `mode`) or `error`. A `: ping` comment is sent every 15 s.',
          'Closing the connection cancels the run.',
        ].join(' '),
        body: AgentRunRequest,
        produces: ['text/event-stream'],
        response: {
          200: { description: 'text/event-stream of StreamFrame', content: { 'text/event-stream': { schema: StreamFrame } } },
          400: ErrorResponse,
          422: ValidationErrorResponse,
        },
      },
    },
    async (request, reply) => {
      const { agent_type, prompt, working_dir, mode } = request.body;
      engine.agent(agent_type);
      engine.workingDirectory(working_dir);
      const stream = new SseStream(reply, pingIntervalMs);
      try {
        await engine.run({
          agentType: agent_type,
          prompt,
          workingDir: working_dir,
          mode,
          signal: stream.signal,
          streaming: true,
          emit: (frame) => stream.send(frame),
        });
        stream.send({ event: 'done', mode });
      } catch (error) {
        if (!stream.signal.aborted) stream.send({ event: 'error', error_message: messageOf(error) });
      } finally {
        stream.end();
      }
    },
  );
};
