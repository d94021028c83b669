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
 *   being taken: it withdraws and waits, then tries again;
 * - a command's check counts what changed since the start of the earliest other replica's command
 *   in flight under an overlapping set as possibly that command's, not the user's: put back, never
 *   taken into the census (which its writer's check would then see undone and write back).
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

/** Another replica's live record, as a registration reads it. */
export interface OtherActivity {
  kind: SandboxActivity['kind'];
  roots: string[];
  /** How long ago it was recorded, by the store's clock. */
  ageMs: number;
}

/**
 * Where the replicas' records are kept (the database, db/sandbox-activity.ts). Every method sees
 * only other replicas' records that have not lapsed: a replica's own are its RepositoryCensus's
 * business.
 */
export interface SandboxActivityStore {
  /**
   * Records `activity` and reads other replicas' live records, in one step that waits for every
   * other replica's register: of two at once the second sees the first. When `withdrawIf` says so
   * of what was read, the record is removed again at once (one that another replica saw meanwhile
   * only makes that one wait a little longer).
   */
  register(activity: SandboxActivity, withdrawIf: (others: OtherActivity[]) => boolean): Promise<{ registered: boolean; others: OtherActivity[] }>;
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

/** A command's registration: its release, and since when other replicas' commands may have been writing where it can. */
export interface CommandRegistration {
  release: Release;
  /**
   * The start, by this process's clock (a little early rather than late), of the earliest other
   * replica's command in flight under an overlapping set; undefined when there was none. A change
   * since then may be that command's, not the user's, so the check puts it back as it does one
   * made during a command of this process.
   */
  othersSince?: number;
}

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

/** The release of record `id`: its removal, not waited for (one that fails lapses). */
const ending = (store: SandboxActivityStore, id: string): Release => () => void store.end(id).catch(() => undefined);

/** Another replica's record of `kind` over a set overlapping `roots`. */
const overlapping = (roots: readonly string[], kind: OtherActivity['kind']) => (other: OtherActivity): boolean => other.kind === kind && overlaps(roots, other.roots);

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
    const { others } = await asked(store.register({ id, kind: 'census', roots: [...roots], ttlMs: wait.timeoutMs + RECORD_MARGIN_MS }, () => false));
    const release = ending(store, id);
    try {
      // New commands of other replicas now see this record and hold back: those in flight drain.
      await this.drain(store, roots, 'command', others, { deadline, wait, why: 'a bash command of another service replica under an overlapping allowed path is still running' });
    } catch (error) {
      release();
      throw error;
    }
    return release;
  }

  /** Before a `bash` command starts: records it once no other replica's first census under an overlapping set is being taken. */
  async command(roots: readonly string[], wait: CoordinationWait): Promise<CommandRegistration> {
    const store = this.store;
    if (store === undefined) return { release: NOTHING };
    const deadline = Date.now() + wait.timeoutMs;
    const census = overlapping(roots, 'census');
    for (;;) {
      const id = randomUUID();
      // Its timeout counted from now, not from the wait's start: the command starts after the wait.
      const ttlMs = wait.timeoutMs + RECORD_MARGIN_MS;
      // Ages are measured after the request left: subtracted from its sending, they give a start no later than the true one.
      const sentAt = Date.now();
      const { registered, others } = await asked(store.register({ id, kind: 'command', roots: [...roots], ttlMs }, (read) => read.some(census)));
      if (registered) {
        const writers = others.filter(overlapping(roots, 'command'));
        const release = ending(store, id);
        return writers.length === 0 ? { release } : { release, othersSince: Math.min(...writers.map((writer) => sentAt - writer.ageMs)) };
      }
      await this.drain(store, roots, 'census', others, { deadline, wait, why: 'another service replica is taking its first inventory of the git repositories under an overlapping allowed path' });
    }
  }

  /**
   * Waits until no other replica's record of `kind` covers a set overlapping `roots`: first as
   * `others` (what the registration read) has them, then as the store has them now.
   */
  private async drain(store: SandboxActivityStore, roots: readonly string[], kind: OtherActivity['kind'], others: readonly OtherActivity[], until: { deadline: number; wait: CoordinationWait; why: string }): Promise<void> {
    let theirs = others.filter((other) => other.kind === kind).map((other) => other.roots);
    while (theirs.some((other) => overlaps(roots, other))) {
      await this.pause(until.deadline, until.wait, until.why);
      theirs = await asked(store.live(kind));
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
