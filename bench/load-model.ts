/**
 * The load bench's model runtime, in a process of its own as a real one would be: scripted from
 * the bench over IPC. Without it the bench's event loop, busy sending 100 runs' requests at once,
 * also answered the service's model calls and delayed every run's first token.
 */
import { scripted, startScriptedModel } from '../packages/testkit/src/index.js';

export type ModelCommand =
  | { kind: 'idle'; runs: number }
  | { kind: 'streamed'; runs: number; tokens: number; intervalMs: number }
  | { kind: 'release' };

const model = await startScriptedModel();
let release!: () => void;
const released = new Promise<void>((resolve) => (release = resolve));

process.on('message', (command: ModelCommand) => {
  if (command.kind === 'idle') {
    // Each waits on the model after its first token, until the bench lets them all finish.
    model.push(...Array.from({ length: command.runs }, () => scripted.chunks('Waiting ', scripted.until(released), 'done.')));
  } else if (command.kind === 'streamed') {
    const tokens = Array.from({ length: command.tokens }, (_, i) => [`token${i} `, scripted.pause(command.intervalMs)]).flat();
    model.push(...Array.from({ length: command.runs }, () => scripted.chunks(...tokens)));
  } else {
    release();
  }
  process.send?.({ kind: 'done' });
});
// The bench ends this process with a signal; the server goes with it.
process.send?.({ kind: 'ready', url: model.url });
