import { z } from 'zod';
import { BASH_PROGRAMS } from './sandbox/command-policy/index.js';
import { runShellTool } from './sandbox/shell-tool.js';
import type { Tool } from './tool.js';

const parameters = z.object({
  command: z.string().min(1).describe('Commands joined by |, &&, || or ; (no $VAR, $(...), subshells or functions)'),
  cwd: z.string().min(1).optional().describe('Working directory (default: the working directory of the run)'),
  timeout: z.number().int().positive().default(60).describe('Seconds before the commands are stopped (default 60)'),
});

export const bashTool: Tool<typeof parameters> = {
  name: 'bash',
  description:
    `Run shell commands in a sandbox. Allowed programs: ${BASH_PROGRAMS.join(', ')}. ` +
    'Pipes, &&, ||, ;, redirections (< > >> 2>&1), quoted here-documents and globs work; variables, $(...), ' +
    'subshells, loops and functions do not. Paths must stay inside the allowed directories; rm takes one file; ' +
    'use the cwd parameter instead of cd. Output is stdout and stderr together, cut at 50000 characters, with a ' +
    'final [exit code: N] line when the last command failed.',
  parameters,
  readOnly: false,
  modifiesFiles: true,
  startArgs: ({ command, cwd }) => ({ command, cwd }),
  execute: (params, context) => runShellTool('bash', params, context),
};
