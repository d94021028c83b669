/**
 * What a run would decide on one tool call, for an operator writing approval rules:
 *
 *   npm run policy -- [--mode M] [--agent A] [--tool T] [--cwd DIR] [--rules FILE] '<command or path>'
 *
 * Prints the verdict (allow, ask or deny) and one reason a line. Exit status: 0 a verdict was
 * printed, 2 the question could not be asked (usage, settings, rules file, working directory).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { AgentType, PermissionMode } from '@mada/protocol';
import { config as loadDotenv } from 'dotenv';
import { explainCall, formatExplanation, QuestionError } from './explain-call.js';
import { loadSettings } from './settings.js';
import { ApprovalRuleSet, readApprovalRulesFile } from './tools/sandbox/command-policy/index.js';
import { errorMessage } from './util/error-message.js';

const USAGE = `usage: npm run policy -- [--mode default|plan|auto_accept] [--agent task|plan|explore] [--tool bash|bash_readonly|read_file|...]
                          [--cwd <dir>] [--rules <file>] '<command, or the path of a file tool>'`;

async function main(args: string[]): Promise<string> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      mode: { type: 'string', default: 'default' },
      agent: { type: 'string', default: 'task' },
      tool: { type: 'string', default: 'bash' },
      cwd: { type: 'string' },
      rules: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return `${USAGE}\n`;
  if (positionals.length !== 1) throw new QuestionError(`expected one command (quote it), got ${positionals.length} arguments`);
  const mode = PermissionMode.safeParse(values.mode);
  if (!mode.success) throw new QuestionError(`--mode: expected one of ${PermissionMode.options.join(', ')}`);
  const agent = AgentType.safeParse(values.agent);
  if (!agent.success) throw new QuestionError(`--agent: expected one of ${AgentType.options.join(', ')}`);
  // npm runs scripts in the package root, the service's start directory under `npm start`; the
  // operator's own paths are relative to where they typed the command.
  const startDir = process.cwd();
  const here = process.env.INIT_CWD ?? startDir;
  loadDotenv({ quiet: true });
  const settings = loadSettings(process.env, startDir);
  const rules = values.rules === undefined ? settings.approvalRules : readApprovalRulesFile(resolve(here, values.rules));
  const explanation = await explainCall({
    argument: positionals[0]!,
    tool: values.tool,
    mode: mode.data,
    agent: agent.data,
    cwd: resolve(here, values.cwd ?? '.'),
    rules: new ApprovalRuleSet(rules),
    settings,
    startDir,
  });
  return formatExplanation(explanation);
}

main(process.argv.slice(2)).then(
  (text) => process.stdout.write(text),
  (error: unknown) => {
    process.stderr.write(`policy: ${errorMessage(error)}\n${error instanceof QuestionError ? `${USAGE}\n` : ''}`);
    process.exitCode = 2;
  },
);
