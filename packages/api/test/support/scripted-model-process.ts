/**
 * A scripted model runtime in a process of its own, so a test can kill it for real. Every chat
 * request gets the same turn: MODEL_TURN=hang streams "Partial answer " and then never ends;
 * MODEL_TURN=answer streams "Recovered answer.". Prints `listening <url>` once it listens.
 */
import { scripted, startScriptedModel, type ScriptedTurn } from '@mada/testkit';

const never = new Promise<never>(() => undefined);
const turn = (): ScriptedTurn =>
  process.env.MODEL_TURN === 'hang' ? scripted.chunks('Partial ', 'answer ', scripted.until(never)) : scripted.text('Recovered answer.');
const model = await startScriptedModel({ port: Number(process.env.MODEL_PORT ?? 0) });
model.push(...Array.from({ length: 100 }, () => turn));
process.stdout.write(`listening ${model.url}\n`);
