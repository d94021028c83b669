import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ErrorResponse, RevertRequest, RevertResponse, RunChangesResponse, RunParams, ValidationErrorResponse } from '@mada/protocol';
import type { CheckpointService } from '../../checkpoints/checkpoint-service.js';
import type { RunService } from '../../runs/run-service.js';

export interface CheckpointRoutesOptions {
  runs: RunService;
  checkpoints: CheckpointService;
}

const tags = ['runs'];
const security = [{ ApiKey: [] }];
const errors = { 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse };

export const checkpointRoutes: FastifyPluginAsyncZod<CheckpointRoutesOptions> = async (app, { runs, checkpoints }) => {
  app.get(
    '/runs/:run_id/changes',
    {
      schema: {
        tags,
        security,
        summary: 'What an ended run changed in its working directory',
        description: [
          'Files added, modified (content or mode) or deleted between the snapshot taken before the run first changed a file',
          'and the one taken at its end, shell commands included; paths are relative to the working directory.',
          'The diff is unified, cut at 1 MiB with a note; binary files show as `Binary files ... differ`.',
          '409 `Run still in progress`, or `No checkpoint for this run` (with the reason when a snapshot failed).',
        ].join(' '),
        params: RunParams,
        response: { 200: RunChangesResponse, ...errors },
      },
    },
    async (request) => checkpoints.changes(await runs.get(request.params.run_id, request.caller.userId)),
  );

  app.post(
    '/runs/:run_id/revert',
    {
      schema: {
        tags,
        security,
        summary: 'Put back every file an ended run changed',
        description: [
          'Each changed file gets its content and mode from before the run: files the run added are removed, deleted ones restored.',
          '409 `Files changed since the run: <paths>` when a file differs from how the run left it, unless `force`.',
        ].join(' '),
        params: RunParams,
        body: RevertRequest,
        response: { 200: RevertResponse, ...errors, 422: ValidationErrorResponse },
      },
    },
    async (request) => {
      const run = await runs.get(request.params.run_id, request.caller.userId);
      return { reverted: await checkpoints.revert(run, request.body.force) };
    },
  );
};
