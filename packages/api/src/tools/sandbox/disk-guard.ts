import type { ToolContext } from '../tool.js';
import type { ScriptSpec } from './command-policy/index.js';
import { floorAdvice, floorBreach, floorEnabled, servicePlaces, watchFloor, type WatchedPlace } from './disk-floor.js';

/** Programs that only free space: what `bash` still runs below the floor, so the agent can clean up. */
const FREEING = new Set(['rm']);

/** Every command of the script is `rm`, with no redirection (which would make or write a file). */
export function onlyFreesSpace(script: ScriptSpec): boolean {
  return script.statements.every((statement) =>
    [statement.first, ...statement.rest.map((next) => next.pipeline)].every((pipeline) =>
      pipeline.commands.every((command) => FREEING.has(command.program) && command.redirections.length === 0),
    ),
  );
}

/** Where a `bash` command can fill a disk that others depend on: its writable paths, and the service's data. */
export const writablePlaces = (context: Pick<ToolContext, 'sandbox' | 'settings'>): WatchedPlace[] => [
  ...context.sandbox.roots.map((root) => ({ path: root, name: root })),
  ...servicePlaces(context.settings),
];

const floorRefusal = (reason: string): string => `Refusing to run: ${floorAdvice(reason)}`;

const floorNote = (reason: string): string => `[stopped, every process of the command killed: ${floorAdvice(reason)}; what it wrote until then is still there]`;

/** The floor for one `bash` command: a refusal before it starts, or a guard for its run and the note it leaves. */
export interface DiskGuard {
  refusal?: string;
  guard?: (stop: () => void) => () => void;
  /** After the run: why the guard stopped it, if it did. */
  note(): string | undefined;
}

/**
 * A command that only removes files (rm) runs below the floor, unwatched; any other is refused there,
 * and watched while it runs: below the floor its processes are killed at once.
 */
export async function diskGuard(script: ScriptSpec, context: Pick<ToolContext, 'sandbox' | 'settings'>): Promise<DiskGuard> {
  if (!floorEnabled(context.settings) || onlyFreesSpace(script)) return { note: () => undefined };
  const places = writablePlaces(context);
  const now = await floorBreach(places, context.settings);
  if (now !== undefined) return { refusal: floorRefusal(now), note: () => undefined };
  let breach: string | undefined;
  return {
    guard: (stop) =>
      watchFloor(places, context.settings, (reason) => {
        breach = reason;
        stop();
      }),
    note: () => (breach === undefined ? undefined : floorNote(breach)),
  };
}
