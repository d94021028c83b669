import { statSync } from 'node:fs';
import type { PermissionMode, StreamFrame } from '@mada/protocol';
import { BadRequestError, UnknownAgentError } from '../errors.js';
import { PathOutsideError, type PathSandbox } from '../tools/sandbox/paths.js';
import type { Tool, ToolSettings } from '../tools/tool.js';
import type { ModelClient } from '../model/index.js';
import { findAgent, type AgentDefinition } from './definitions.js';
import { RunLoop, type RunLimits } from './run-loop.js';

export class WorkingDirectoryError extends BadRequestError {
  constructor(dir: string) {
    super(`Working directory not allowed: ${dir}`);
  }
}

export interface EngineDeps {
  model: ModelClient;
  /** Every tool the service has, by name; each agent gets its own subset. */
  tools: ReadonlyMap<string, Tool>;
  sandbox: PathSandbox;
  toolSettings: ToolSettings;
  limits: RunLimits;
  /** Relative working directories (`.`) are taken from here: the service's start directory. */
  startDir: string;
}

export interface RunOptions {
  agentType: string;
  prompt: string;
  workingDir: string;
  mode: PermissionMode;
  signal: AbortSignal;
  streaming: boolean;
  emit?: (frame: StreamFrame) => void;
}

const ignore = (): void => undefined;

/** Finds the agent, confines it to its working directory and tool set, and runs its loop. */
export class AgentEngine {
  constructor(private readonly deps: EngineDeps) {}

  /** Throws UnknownAgentError (400) before anything starts. */
  agent(name: string): AgentDefinition {
    const agent = findAgent(name);
    if (!agent) throw new UnknownAgentError(name);
    return agent;
  }

  /** The real working directory, inside the sandbox and existing; otherwise WorkingDirectoryError. */
  workingDirectory(dir: string): string {
    try {
      const real = this.deps.sandbox.resolve(dir, this.deps.startDir);
      if (statSync(real).isDirectory()) return real;
    } catch (error) {
      if (!(error instanceof PathOutsideError) && (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    throw new WorkingDirectoryError(dir);
  }

  async run(options: RunOptions): Promise<string> {
    const agent = this.agent(options.agentType);
    const workingDir = this.workingDirectory(options.workingDir);
    const tools = new Map(
      agent
        .toolNames(options.mode)
        .flatMap((name) => (this.deps.tools.has(name) ? [[name, this.deps.tools.get(name)!] as const] : [])),
    );
    const loop = new RunLoop(this.deps.model, this.deps.limits, {
      agent,
      prompt: options.prompt,
      mode: options.mode,
      streaming: options.streaming,
      tools,
      emit: options.emit ?? ignore,
      toolContext: {
        workingDir,
        sandbox: this.deps.sandbox,
        settings: this.deps.toolSettings,
        signal: options.signal,
        spawnAgent: (agentType, prompt, dir, signal) =>
          this.run({ agentType, prompt, workingDir: dir, mode: options.mode, signal, streaming: false }),
      },
    });
    options.signal.throwIfAborted();
    return loop.run();
  }
}
