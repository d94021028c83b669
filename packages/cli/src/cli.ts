import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { AGENT_TYPES, PERMISSION_MODES, RUN_STATUSES } from '@mada/protocol';
import { explainFailure } from './api/explain.js';
import { attachCommand, type AttachFlags } from './commands/attach.js';
import { cancelCommand } from './commands/cancel.js';
import { approveCommand, approvalsCommand, denyCommand, type ApprovalsFlags, type DecideFlags } from './commands/approvals.js';
import { chatCommand, type ChatFlags } from './commands/chat.js';
import { doctorCommand, type DoctorFlags } from './commands/doctor.js';
import { diffCommand, revertCommand, type RevertFlags } from './commands/checkpoints.js';
import { configCommand, type ConfigFlags } from './commands/config.js';
import { exploreCommand, type ExploreFlags } from './commands/explore.js';
import { createKeyCommand, keysCommand, revokeKeyCommand, whoamiCommand, type CreateKeyFlags, type KeysFlags } from './commands/keys.js';
import { modelsCommand, type ModelsFlags } from './commands/models.js';
import {
  addWebhookCommand,
  collectEvent,
  removeWebhookCommand,
  webhookDeliveriesCommand,
  webhooksCommand,
  type AddWebhookFlags,
  type WebhooksFlags,
} from './commands/webhooks.js';
import { runCommand, type RunFlags } from './commands/run.js';
import { runsCommand, type RunsFlags } from './commands/runs.js';
import type { ServiceFlags } from './commands/service.js';
import { sessionsCommand, type SessionsFlags } from './commands/sessions.js';
import { statusCommand, type StatusFlags } from './commands/status.js';
import { EXIT_OK, EXIT_USAGE, UsageError } from './errors.js';
import { Terminal } from './ui/terminal.js';
import { cliVersion } from './version.js';

const HELP_CODES = new Set(['commander.helpDisplayed', 'commander.help', 'commander.version']);

function apiOption(): Option {
  return new Option('-a, --api <url>', 'service URL (overrides MADA_API_URL and api.url)');
}

function limit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new InvalidArgumentError('must be a whole number from 1 to 100');
  return n;
}

function days(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 3650) throw new InvalidArgumentError('must be a whole number from 1 to 3650');
  return n;
}

/** The command tree; each action stores its exit code in `result`. */
function buildProgram(terminal: Terminal, result: { code: number }): Command {
  const version = cliVersion();
  const program = new Command('mada')
    .description('Terminal client for the mada agent service')
    .version(version, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .exitOverride()
    .showHelpAfterError('(mada --help lists commands and options)')
    .addHelpText('after', '\nWith no command, mada starts a chat. Settings: ~/.mada/config.toml (see `mada config`).');
  const command = (name: string, description: string, isDefault = false): Command =>
    program.command(name, { isDefault }).description(description).version(version, '-v, --version', 'print the version');

  command('chat', 'chat with an agent (the default command)', true)
    .option('-d, --directory <path>', 'working directory for the agent (default: the current one)')
    .addOption(apiOption())
    .addOption(new Option('--agent <name>', 'agent to talk to').choices(AGENT_TYPES).default('task'))
    .addOption(new Option('--mode <mode>', 'permission mode (overrides MADA_MODE and cli.mode)').choices(PERMISSION_MODES))
    .option('--stream', 'stream progress as it happens (default)')
    .option('--no-stream', 'wait for the whole reply instead of streaming')
    .option('--resume <session-id>', 'continue a stored session (its id or 8+ first characters; see `mada sessions`)')
    .option('--model <name>', "the model of the session's turns (see `mada models`; default: the service's)")
    // As the default command, chat receives any word that is not a command: name it as such.
    .allowExcessArguments(true)
    .action(async (flags: ChatFlags, chat: Command) => {
      const [unknown] = chat.args;
      if (unknown !== undefined) throw new UsageError(`unknown command '${unknown}'`, 'mada --help lists the commands');
      result.code = await chatCommand(flags, terminal);
    });

  command('run', 'one run for scripts: the answer on stdout, progress on stderr, exit 0 when it succeeded')
    .argument('<prompt...>', 'what the agent should do')
    .option('-d, --directory <path>', 'working directory for the agent (default: the current one)')
    .addOption(apiOption())
    .addOption(new Option('--agent <name>', 'agent to run').choices(AGENT_TYPES).default('task'))
    .addOption(new Option('--mode <mode>', 'permission mode (overrides MADA_MODE and cli.mode)').choices(PERMISSION_MODES))
    .option('--model <name>', "the model to run (see `mada models`; default: the service's)")
    .option('--json', "print the run's events as JSON lines instead of the answer")
    .addOption(
      new Option('--on-ask <choice>', 'when a rule asks before a call: ask on the terminal, or deny it (default: ask when stdin is a terminal)').choices([
        'ask',
        'deny',
      ]),
    )
    .action(async (words: string[], flags: RunFlags) => {
      result.code = await runCommand(words, flags, terminal);
    });

  command('status', 'check the service and list its agents')
    .addOption(apiOption())
    .option('--json', 'print JSON')
    .action(async (flags: StatusFlags) => {
      result.code = await statusCommand(flags, terminal);
    });

  command('doctor', 'check what agents need (programs, model, database, workspace) and print the line that fixes each problem')
    .option('-d, --directory <path>', 'the directory agents should reach (default: the current one)')
    .addOption(apiOption())
    .option('--json', 'print JSON')
    .action(async (flags: DoctorFlags) => {
      result.code = await doctorCommand(flags, terminal);
    });

  command('models', 'list the models --model may name, with their context windows')
    .addOption(apiOption())
    .option('--json', 'print JSON')
    .action(async (flags: ModelsFlags) => {
      result.code = await modelsCommand(flags, terminal);
    });

  command('sessions', 'list your stored sessions, most recent first')
    .addOption(apiOption())
    .option('--limit <n>', 'how many to list (1-100)', limit, 20)
    .option('--json', 'print JSON')
    .action(async (flags: SessionsFlags) => {
      result.code = await sessionsCommand(flags, terminal);
    });

  command('runs', 'list your stored agent runs, newest first')
    .addOption(apiOption())
    .addOption(new Option('--status <status>', 'only runs with this status').choices(RUN_STATUSES))
    .option('--limit <n>', 'how many to list (1-100)', limit, 20)
    .option('--json', 'print JSON')
    .action(async (flags: RunsFlags) => {
      result.code = await runsCommand(flags, terminal);
    });

  command('attach', "follow a run's events until it ends (Ctrl-C leaves; the run goes on)")
    .argument('<run-id>', 'the run, or 8+ first characters of its id (see `mada runs`)')
    .option('--from-now', 'skip the events already sent; show only what comes next')
    .addOption(apiOption())
    .action(async (runId: string, flags: AttachFlags) => {
      result.code = await attachCommand(runId, flags, terminal);
    });

  command('cancel', 'stop a run and print how it ended')
    .argument('<run-id>', 'the run, or 8+ first characters of its id (see `mada runs`)')
    .addOption(apiOption())
    .action(async (runId: string, flags: ServiceFlags) => {
      result.code = await cancelCommand(runId, flags, terminal);
    });

  command('approvals', 'list the approvals your runs are waiting for')
    .addOption(apiOption())
    .option('--json', 'print JSON')
    .action(async (flags: ApprovalsFlags) => {
      result.code = await approvalsCommand(flags, terminal);
    });

  command('approve', 'let a waiting run go on with the call it asked about')
    .argument('<id>', 'approval id, or 8+ first characters of it (see `mada approvals`)')
    .option('--always', 'also stop asking for this in this working directory')
    .addOption(apiOption())
    .action(async (id: string, flags: DecideFlags) => {
      result.code = await approveCommand(id, flags, terminal);
    });

  command('deny', 'refuse the call a waiting run asked about')
    .argument('<id>', 'approval id, or 8+ first characters of it (see `mada approvals`)')
    .argument('[message...]', 'why, for the agent to read')
    .addOption(apiOption())
    .action(async (id: string, message: string[], flags: DecideFlags) => {
      result.code = await denyCommand(id, message, flags, terminal);
    });

  command('whoami', 'show who your key acts as: role, workspace, quotas and usage today')
    .addOption(apiOption())
    .option('--json', 'print JSON')
    .action(async (flags: KeysFlags) => {
      result.code = await whoamiCommand(flags, terminal);
    });

  const keys = command('keys', 'list your stored API keys (create and revoke them with the subcommands)')
    .addOption(apiOption())
    .option('--json', 'print JSON')
    .action(async (flags: KeysFlags) => {
      result.code = await keysCommand(flags, terminal);
    });
  keys
    .command('create')
    .description('make a new key and print it once')
    .argument('<name>', 'what the key is for (a machine, a CI job)')
    .option('--expires-in-days <days>', 'refused after this many days', days)
    .addOption(apiOption())
    // `-a` after the subcommand is taken by `keys` itself: the options of both count.
    .action(async (name: string, _flags: CreateKeyFlags, self: Command) => {
      result.code = await createKeyCommand(name, self.optsWithGlobals<CreateKeyFlags>(), terminal);
    });
  keys
    .command('revoke')
    .description('refuse one of your keys from now on')
    .argument('<id>', 'the key, or 8+ first characters of its id (see `mada keys`)')
    .addOption(apiOption())
    .action(async (id: string, _flags: ServiceFlags, self: Command) => {
      result.code = await revokeKeyCommand(id, self.optsWithGlobals<ServiceFlags>(), terminal);
    });

  const webhooks = command('webhooks', 'list your webhooks (add, remove and check them with the subcommands)')
    .addOption(apiOption())
    .option('--json', 'print JSON')
    .action(async (flags: WebhooksFlags) => {
      result.code = await webhooksCommand(flags, terminal);
    });
  webhooks
    .command('add')
    .description('have the service POST to a URL when a run of yours asks for an approval or ends; prints its secret once')
    .argument('<url>', 'http or https URL of the receiver (ntfy, Slack, your own)')
    .option('--event <event>', 'approval_requested or run_ended; again for both (default: both)', collectEvent)
    .option('--secret <secret>', 'sign deliveries with this (16-256 printable characters; default: the service makes one)')
    .addOption(apiOption())
    // `-a` and `--json` after the subcommand are taken by `webhooks` itself: the options of both count.
    .action(async (url: string, _flags: AddWebhookFlags, self: Command) => {
      result.code = await addWebhookCommand(url, self.optsWithGlobals<AddWebhookFlags>(), terminal);
    });
  webhooks
    .command('rm')
    .description('delete a webhook; its pending deliveries are not sent')
    .argument('<id>', 'the webhook, or 8+ first characters of its id (see `mada webhooks`)')
    .addOption(apiOption())
    .action(async (id: string, _flags: ServiceFlags, self: Command) => {
      result.code = await removeWebhookCommand(id, self.optsWithGlobals<ServiceFlags>(), terminal);
    });
  webhooks
    .command('deliveries')
    .description("a webhook's last 100 deliveries, newest first, with how each went")
    .argument('<id>', 'the webhook, or 8+ first characters of its id (see `mada webhooks`)')
    .addOption(apiOption())
    .action(async (id: string, _flags: WebhooksFlags, self: Command) => {
      result.code = await webhookDeliveriesCommand(id, self.optsWithGlobals<WebhooksFlags>(), terminal);
    });

  command('config', 'show the effective settings and where each comes from')
    .option('--init', 'write a default ~/.mada/config.toml')
    .option('--force', 'with --init: overwrite an existing file')
    .option('--json', 'print JSON')
    .action((flags: ConfigFlags) => {
      result.code = configCommand(flags, terminal);
    });

  command('explore', 'one-shot question to the explore agent (deprecated: use `mada chat --agent explore`)')
    .argument('<query...>', 'what to ask')
    .option('-d, --directory <path>', 'directory to explore (default: the current one)')
    .addOption(apiOption())
    .action(async (words: string[], flags: ExploreFlags) => {
      result.code = await exploreCommand(words, flags, terminal);
    });

  command('diff', 'show what a run changed in its working directory')
    .argument('<run-id>', 'the run, or 8+ first characters of its id (see `mada runs`)')
    .addOption(apiOption())
    .action(async (runId: string, flags: ServiceFlags) => {
      result.code = await diffCommand(runId, flags, terminal);
    });

  command('revert', 'put back every file a run changed')
    .argument('<run-id>', 'the run, or 8+ first characters of its id (see `mada runs`)')
    .option('--force', 'also over files changed since the run')
    .addOption(apiOption())
    .action(async (runId: string, flags: RevertFlags) => {
      result.code = await revertCommand(runId, flags, terminal);
    });

  return program;
}

/** Runs the client; the exit code is 0 on success, 1 on an error, 2 on a usage error. */
export async function runCli(argv: string[], terminal = new Terminal()): Promise<number> {
  const result = { code: EXIT_OK };
  try {
    await buildProgram(terminal, result).parseAsync(argv);
    return result.code;
  } catch (error) {
    if (error instanceof CommanderError) return HELP_CODES.has(error.code) ? EXIT_OK : EXIT_USAGE;
    const failure = explainFailure(error);
    terminal.error(failure.message, failure.hint);
    return failure.exitCode;
  }
}
