import { realpathSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import type { HealthResponse } from '@mada/protocol';
import type { ApiClient } from '../api/client.js';
import { explainFailure } from '../api/explain.js';
import { resolveSettings } from '../config/resolve.js';
import { allowedPathsFix, shellWord } from '../doctor/fix-lines.js';
import { EXIT_ERROR, EXIT_OK } from '../errors.js';
import { safeText } from '../ui/safe-text.js';
import { clip } from '../ui/table.js';
import type { Terminal } from '../ui/terminal.js';
import { workingDirectory } from './directory.js';
import { apiFlag, clientFor, type ServiceFlags } from './service.js';

export interface DoctorFlags extends ServiceFlags {
  directory?: string;
  json?: boolean;
}

/** One thing checked: fine or not, what was found, and for a problem the line that fixes it. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

const ok = (name: string, detail: string): Check => ({ name, ok: true, detail });
const problem = (name: string, detail: string, fix: string): Check => ({ name, ok: false, detail, fix });

const INSTALL = (pkg: string): string => `sudo apt-get install ${pkg} on the service's machine, then start the service again`;

/**
 * The programs the tools start, as the service found them on its own PATH: what counts is the
 * service's machine and environment, which the client's may not be.
 */
function programChecks(checks: HealthResponse['checks']): Check[] {
  const found: Check[] = [];
  if (checks.ripgrep === 'missing') found.push(problem('ripgrep', 'rg is not on the service\'s PATH: search falls back to a slower one', INSTALL('ripgrep')));
  else if (checks.ripgrep === 'ok') found.push(ok('ripgrep', 'found'));
  if (checks.git === 'missing') found.push(problem('git', "git is not on the service's PATH: no checkpoints (mada diff, mada revert)", INSTALL('git')));
  else if (checks.git === 'ok') found.push(ok('git', 'found'));
  return found;
}

function databaseCheck(state: string | undefined): Check {
  return state === 'ok'
    ? ok('database', 'answers')
    : problem('database', `the service's database does not answer (${state ?? 'no report'})`, "check the service's DATABASE_URL (is PostgreSQL running?) or that its DATA_DIR is writable and has room; its log says more");
}

/**
 * The runtime, and whether it has the models the service is set to use: each one `missing_models`
 * names (every configured model, LLM_MODELS), with the line that fetches it. A service from before
 * `missing_models` says only `checks.model`, of its default model.
 */
function modelChecks(health: HealthResponse): Check[] {
  const { checks } = health;
  if (checks.model_runtime !== 'ok') {
    return [problem('model runtime', 'the service cannot reach it', "start it (`ollama serve`), or set the service's LLM_BASE_URL to where it listens")];
  }
  const runtime = ok('model runtime', 'answers');
  const name = health.model?.name ?? 'the configured model';
  const missing = health.missing_models ?? (checks.model === 'missing' ? [{ name, reason: '' }] : []);
  const defaultMissing = missing.some((model) => model.name === name);
  const problems = missing.map((model) => {
    const pull = model.name === 'the configured model' ? 'ollama pull <model>' : `ollama pull ${shellWord(model.name)}`;
    return model.name === name
      ? problem('model', `${clip(model.name, 100)} is not in the model runtime`, `${pull} (or set the service's LLM_MODEL to one the runtime has)`)
      : problem('model', `${clip(model.name, 100)} (one of LLM_MODELS) is not in the model runtime`, `${pull} (or take it out of the service's LLM_MODELS)`);
  });
  if (defaultMissing) return [runtime, ...problems];
  if (checks.model === 'unknown') return [runtime, ok('model', `${name}: the runtime does not list its models, not checked`), ...problems];
  // `missing` here is another configured model's: the default one is there.
  if (checks.model !== 'ok' && !(checks.model === 'missing' && health.missing_models !== undefined)) return [runtime, ...problems];
  const window = health.model === undefined ? '' : ` (a window of ${health.model.context_window} tokens)`;
  return [runtime, ok('model', `${name}${window}`), ...problems];
}

/** bubblewrap, and slirp4netns behind bash's own network. */
function sandboxChecks(checks: HealthResponse['checks']): Check[] {
  if (checks.sandbox === 'unavailable') return [problem('sandbox', 'bubblewrap is not usable: the shell tools refuse to run', INSTALL('bubblewrap'))];
  if (checks.sandbox === 'disabled') return [ok('sandbox', 'disabled by SANDBOX_ENABLED=false: tools run under the command policy alone')];
  if (checks.sandbox !== 'bubblewrap') return [];
  const sandbox = ok('sandbox', 'bubblewrap');
  if (checks.bash_network === 'host') {
    return [sandbox, problem('bash network', "bash shares the service machine's network, the service's own port included", `${INSTALL('slirp4netns')} (or set SANDBOX_NETWORK=false)`)];
  }
  if (checks.bash_network === 'own') return [sandbox, ok('bash network', 'its own, through slirp4netns')];
  if (checks.bash_network === 'none') return [sandbox, ok('bash network', 'none (SANDBOX_NETWORK=false)')];
  return [sandbox];
}

/** What the service's /health reports: its database, model runtime and model, sandbox and programs. */
function healthChecks(health: HealthResponse): Check[] {
  return [databaseCheck(health.checks.database), ...modelChecks(health), ...sandboxChecks(health.checks), ...programChecks(health.checks)];
}

function isInside(directory: string, root: string): boolean {
  const path = relative(root, directory);
  return path === '' || (!path.startsWith('..') && !isAbsolute(path));
}

/** Whether the agents may work in `directory`: the caller's workspace as the service decides it. */
async function workspaceCheck(client: ApiClient, directory: string): Promise<Check> {
  let me;
  try {
    me = await client.me();
  } catch (error) {
    const failure = explainFailure(error);
    return problem('workspace', `could not ask the service (${failure.message})`, failure.hint ?? 'the service log says more');
  }
  const paths = me.workspace.paths;
  // The service stores its paths with their links resolved; so is the directory compared with them.
  const real = realpathSync(directory);
  const root = paths.find((path) => isInside(real, path));
  if (root !== undefined) return ok('workspace', `${directory} is inside ${root}`);
  const detail = `${directory} is outside your workspace (${paths.join(', ') || 'no paths'}): agents cannot work there`;
  // Local mode's one user, `local`, has ALLOWED_PATHS; a keyed user may have paths of their own.
  return me.id === 'local'
    ? problem('workspace', detail, allowedPathsFix(real, paths))
    : problem('workspace', detail, `an admin adds it to your workspace_paths (PATCH /users/${me.id}), or to the service's ALLOWED_PATHS when you have none of your own`);
}

async function serviceChecks(client: ApiClient, url: string, directory: string): Promise<Check[]> {
  let health: HealthResponse;
  try {
    health = await client.health();
  } catch (error) {
    const failure = explainFailure(error);
    return [problem('service', failure.message, 'start it in the checkout (npm start), or point MADA_API_URL or -a/--api at it')];
  }
  const service = ok('service', `mada ${health.version} at ${url}, ${health.status}`);
  return [service, ...healthChecks(health), await workspaceCheck(client, directory)];
}

/** Everything checked, from the service's /health and /me (nothing past the first problem when it does not answer). */
export async function runChecks(flags: DoctorFlags): Promise<{ url: string; directory: string; checks: Check[] }> {
  const directory = workingDirectory(flags.directory);
  const { values } = resolveSettings(apiFlag(flags));
  const client = clientFor(values);
  return { url: values.apiUrl, directory, checks: await serviceChecks(client, values.apiUrl, directory) };
}

function printChecks(checks: Check[], terminal: Terminal): void {
  const width = Math.max(...checks.map((check) => check.name.length));
  for (const check of checks) {
    const mark = check.ok ? terminal.style('green', '✔') : terminal.style('red', '✗');
    terminal.print(`${mark} ${check.name.padEnd(width)}  ${safeText(check.detail)}`);
    if (check.fix !== undefined) terminal.print(`  ${' '.repeat(width)}  ${terminal.style('bold', 'fix:')} ${safeText(check.fix)}`);
  }
}

/** `mada doctor`: what a first run needs, each with the line that fixes it; exit 1 on any problem. */
export async function doctorCommand(flags: DoctorFlags, terminal: Terminal): Promise<number> {
  const report = await runChecks(flags);
  const problems = report.checks.filter((check) => !check.ok).length;
  if (flags.json) {
    terminal.printJson({ ...report, problems });
  } else {
    printChecks(report.checks, terminal);
    terminal.print(problems === 0 ? 'No problem found.' : `${problems} ${problems === 1 ? 'problem' : 'problems'}: run the fix lines above, then mada doctor again.`);
  }
  return problems === 0 ? EXIT_OK : EXIT_ERROR;
}
