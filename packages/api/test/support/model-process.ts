import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { TSX } from './service-process.js';

const SCRIPT = fileURLToPath(new URL('./scripted-model-process.ts', import.meta.url));

export interface ModelProcess {
  child: ChildProcess;
  url: string;
  port: number;
  /** SIGKILL, as the OOM killer or a crash would end it; resolves once it is gone. */
  kill(): Promise<void>;
}

/** Starts the scripted model runtime as a child process (see scripted-model-process.ts). */
export async function startModelProcess(turn: 'hang' | 'answer', port = 0): Promise<ModelProcess> {
  const child = spawn(process.execPath, ['--conditions=mada-source', '--import', TSX, SCRIPT], {
    env: { PATH: process.env.PATH ?? '', MODEL_TURN: turn, MODEL_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const match = /listening (http:\/\/\S+)/.exec(text);
      if (match?.[1]) resolve(match[1]);
    });
    exited.then(([code]) => reject(new Error(`scripted model process exited with ${String(code)}: ${text}`)), reject);
  });
  return {
    child,
    url,
    port: Number(new URL(url).port),
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
