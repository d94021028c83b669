import type { Invocation, ResolvedRedirection } from '../../../../src/tools/sandbox/command-policy/index.js';
import { childEnvironment } from '../../../../src/tools/sandbox/exec/environment.js';
import { locateProgram } from '../../../../src/tools/sandbox/exec/program-path.js';
import { runScript, type RunOptions, type RunResult, type ScriptShape } from '../../../../src/tools/sandbox/exec/run-script.js';

export const testEnv = childEnvironment(process.env, []);
export const locate = (name: string): string | undefined => locateProgram(name, testEnv.PATH as string);

/** An invocation as the policy would produce it, for any program (the executor trusts its input). */
export function run(argv: string[], ...redirections: ResolvedRedirection[]): Invocation {
  const [program = ''] = argv;
  const executable = locate(program);
  if (executable === undefined) throw new Error(`${program} is not installed`);
  return { program, executable, argv, redirections };
}

type Pipeline = { commands: Invocation[] };
export const pipeline = (...commands: Invocation[]): Pipeline => ({ commands });

type Script = ScriptShape<Invocation>;

/** `a; b` as statements of single pipelines. */
export const sequence = (...pipelines: Pipeline[]): Script => ({ statements: pipelines.map((first) => ({ first, rest: [] })) });

export const list = (first: Pipeline, ...rest: ['&&' | '||', Pipeline][]): Script => ({
  statements: [{ first, rest: rest.map(([operator, p]) => ({ operator, pipeline: p })) }],
});

export function execute(
  script: Script,
  cwd: string,
  options: Partial<RunOptions<Invocation>> = {},
): Promise<RunResult> {
  return runScript(script, { cwd, env: testEnv, timeoutMs: 20_000, prepare: (i) => i, locate, ...options });
}
