import { z } from 'zod';
import { READONLY_PROGRAMS } from './sandbox/command-policy/index.js';
import { runShellTool } from './sandbox/shell-tool.js';
import type { Tool } from './tool.js';

const parameters = z.object({
  command: z.string().min(1).describe('One command, or a | pipeline of commands'),
  cwd: z.string().min(1).optional().describe('Working directory (default: the working directory of the run)'),
  timeout: z.number().int().positive().default(30).describe('Seconds before the command is stopped (default 30)'),
});

export const bashReadonlyTool: Tool<typeof parameters> = {
  name: 'bash_readonly',
  description:
    `Run a read-only shell command: one command or a | pipeline of ${READONLY_PROGRAMS.join(', ')} ` +
    '(git only status, log, diff, show, branch listing). No &&, ||, ;, redirections, $VAR, $(...), globs or ~; ' +
    'quote patterns. Paths must stay inside the allowed directories. Output is stdout and stderr together, ' +
    'cut at 50000 characters, with a final [exit code: N] line when the command failed.',
  parameters,
  readOnly: true,
  startArgs: ({ command }) => ({ command }),
  execute: (params, context) => runShellTool('bash_readonly', params, context),
};
