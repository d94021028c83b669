import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { under } from './protected-snapshot.js';

/*
 * Two service processes (replicas) sharing a directory each keep a census of the repositories
 * under it (repository-census.ts). Within one process a first census taken while a `bash` command
 * under an overlapping set runs adopts that command's census; across processes nothing else tells
 * one of the other's commands. So every `bash` command and every first census of every replica is
 * recorded where all replicas see it (a table of the shared PostgreSQL database), and:
 *
 * - a first census waits, before it walks, until no other replica's command under an overlapping
 *   set is in flight (running or being checked), so what the walk finds is never a command's plant
 *   that the command's own check removes afterwards;
 * - a command does not start while another replica's first census under an overlapping set is
 *   being taken: it withdraws and waits, then tries again.
 *
 * A record and the look at the other kind are one step that every other registration waits for,
 * so of a command and a census registering at once the second always sees the first. Records
 * lapse at their command's timeout plus a margin, so a crashed replica's never block for good. Every
 * wait is bounded and fails closed: the command is refused with the reason.
 */

/** A command's or a first census's record, as the shared store keeps it. */
export interface SandboxActivity {
  id: string;
  kind: 'command' | 'census';
  /** The allowed paths it covers, byte strings (util/byte-path.ts). */
  roots: string[];
  /** The record lapses this long after it is made (measured by the store's clock). */
  ttlMs: number;
}

/**
 * Where the replicas' records are kept (the database, db/sandbox-activity.ts). Every method sees
 * only other replicas' records that have not lapsed: a replica's own are its RepositoryCensus's
 * business.
 */
export interface SandboxActivityStore {
  /**
   * Records `activity` and reads the roots of other replicas' live records of the other kind, in
   * one step that waits for every other replica's register: of two at once the second sees the
   * first. When `withdrawIf` says so of what was read, the record is removed again at once (one
   * that another replica saw meanwhile only makes that one wait a little longer).
   */
  register(activity: SandboxActivity, withdrawIf: (others: string[][]) => boolean): Promise<{ registered: boolean; others: string[][] }>;
  /** The roots of other replicas' live records of `kind`. */
  live(kind: SandboxActivity['kind']): Promise<string[][]>;
  /** Removes a record (its command checked, its census taken). */
  end(id: string): Promise<void>;
}

/** How long a first census or a command may wait for another replica, and the call's cancellation. */
export interface CoordinationWait {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** Ends a registration; never fails (a record that cannot be removed lapses). */
export type Release = () => void;

/**
 * Why `bash` cannot run: a wait for another replica ran out or was cancelled, or the shared
 * database did not answer (its error is the cause, kept out of the message, which the model reads).
 */
export class SandboxCoordinationRefusal extends Error {
  override readonly name = 'SandboxCoordinationRefusal';
}

/** Past its command's timeout: the sandbox's teardown and the check after it (a big tree's walk). */
const RECORD_MARGIN_MS = 60_000;
const POLL_MS = 100;

/** One of the sets of allowed paths holds a path of the other: a command under one can write where the other walks. */
const overlaps = (mine: readonly string[], theirs: readonly string[]): boolean =>
  mine.some((a) => theirs.some((b) => under(a, b) || under(b, a)));

const NOTHING: Release = () => undefined;

const UNREACHABLE = 'Refusing to run bash: the database through which service replicas coordinate their bash commands did not answer; try again later';

/** The store's answer, or the refusal: a replica that cannot tell what the others run does not run. */
async function asked<T>(question: Promise<T>): Promise<T> {
  try {
    return await question;
  } catch (error) {
    throw new SandboxCoordinationRefusal(UNREACHABLE, { cause: error });
  }
}

/**
 * The replicas' agreement over `store`; without a store (SQLite: one process) every call returns
 * at once, the process's own RepositoryCensus being all there is.
 */
export class CensusCoordinator {
  constructor(private readonly store?: SandboxActivityStore) {}

  /** Before a first census's walk: waits until no other replica's command under an overlapping set is in flight. */
  async census(roots: readonly string[], wait: CoordinationWait): Promise<Release> {
    const store = this.store;
    if (store === undefined) return NOTHING;
    const deadline = Date.now() + wait.timeoutMs;
    const id = randomUUID();
    const release = (): void => void store.end(id).catch(() => undefined);
    const { others } = await asked(store.register({ id, kind: 'census', roots: [...roots], ttlMs: wait.timeoutMs + RECORD_MARGIN_MS }, () => false));
    try {
      // New commands of other replicas now see this record and hold back: those in flight drain.
      let running = others;
      while (running.some((theirs) => overlaps(roots, theirs))) {
        await this.pause(deadline, wait, 'a bash command of another service replica under an overlapping allowed path is still running');
        running = await asked(store.live('command'));
      }
    } catch (error) {
      release();
      throw error;
    }
    return release;
  }

  /** Before a `bash` command starts: records it once no other replica's first census under an overlapping set is being taken. */
  async command(roots: readonly string[], wait: CoordinationWait): Promise<Release> {
    const store = this.store;
    if (store === undefined) return NOTHING;
    const deadline = Date.now() + wait.timeoutMs;
    const blocks = (others: string[][]): boolean => others.some((theirs) => overlaps(roots, theirs));
    for (;;) {
      const id = randomUUID();
      // Its timeout counted from now, not from the wait's start: the command starts after the wait.
      const ttlMs = wait.timeoutMs + RECORD_MARGIN_MS;
      const { registered, others } = await asked(store.register({ id, kind: 'command', roots: [...roots], ttlMs }, blocks));
      if (registered) return () => void store.end(id).catch(() => undefined);
      let taking = others;
      while (blocks(taking)) {
        await this.pause(deadline, wait, 'another service replica is taking its first inventory of the git repositories under an overlapping allowed path');
        taking = await asked(store.live('census'));
      }
    }
  }

  private async pause(deadline: number, wait: CoordinationWait, why: string): Promise<void> {
    const left = deadline - Date.now();
    if (wait.signal?.aborted === true) throw new SandboxCoordinationRefusal(`Refusing to run bash: cancelled while waiting, since ${why}`);
    if (left <= 0) {
      throw new SandboxCoordinationRefusal(
        `Refusing to run bash: ${why}, and it did not end within ${Math.round(wait.timeoutMs / 1000)} s; try again later`,
      );
    }
    try {
      await sleep(Math.min(POLL_MS, left), undefined, wait.signal === undefined ? {} : { signal: wait.signal });
    } catch {
      throw new SandboxCoordinationRefusal(`Refusing to run bash: cancelled while waiting, since ${why}`);
    }
  }
}
