import { lookup as systemLookup, type LookupAddress } from 'node:dns';

/** Name lookups of webhook hosts in flight at once, whatever their number or owners. */
export const MAX_LOOKUPS_IN_FLIGHT = 2;
/** How long a caller waits for its answer (or for a turn) before the name counts as not resolving. */
export const LOOKUP_WAIT_MS = 5_000;
/** Callers waiting for a turn at most; more are told at once that the name does not resolve. */
const MAX_WAITING = 64;

export type Lookup = (hostname: string, options: { all: true; verbatim: true }, callback: (error: Error | null, addresses: LookupAddress[]) => void) => void;

export class LookupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LookupError';
  }
}

/**
 * Node's `dns.lookup` asks the system's resolver on one of the four threads of libuv's pool, which
 * every file read and write of the service shares, and a name whose DNS server never answers holds
 * its thread for the resolver's whole timeout (seconds, times its attempts). A user's webhook hosts
 * are the user's to choose: without a cap, a few such names would hold every thread and stall all
 * users' file operations. Here at most MAX_LOOKUPS_IN_FLIGHT threads are ever held by lookups,
 * however long they hang; a caller gives up after LOOKUP_WAIT_MS (its lookup keeps its turn until
 * the resolver answers, so the cap holds). One is built at start-up and shared.
 */
export class HostResolver {
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly options: { lookup?: Lookup; maxInFlight?: number; waitMs?: number } = {}) {}

  /** Every address `hostname` resolves to, in the resolver's order. */
  resolve(hostname: string): Promise<LookupAddress[]> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (outcome: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        outcome();
      };
      const timer = setTimeout(() => {
        this.leaveQueue(start);
        settle(() => reject(new LookupError(`no answer for ${hostname} within ${this.waitMs} ms`)));
      }, this.waitMs);
      timer.unref();
      const start = (): void => {
        this.inFlight += 1;
        const done = (error: unknown, addresses: LookupAddress[] = []): void => {
          this.inFlight -= 1;
          this.waiting.shift()?.();
          settle(() => (error ? reject(error instanceof Error ? error : new LookupError(String(error))) : resolve(addresses)));
        };
        try {
          (this.options.lookup ?? (systemLookup as Lookup))(hostname, { all: true, verbatim: true }, done);
        } catch (error) {
          // A name Node refuses before asking (it throws rather than calls back) must not keep its turn.
          done(error);
        }
      };
      if (this.inFlight < this.maxInFlight) start();
      else if (this.waiting.length < MAX_WAITING) this.waiting.push(start);
      else settle(() => reject(new LookupError(`too many lookups waiting; ${hostname} not asked`)));
    });
  }

  private get maxInFlight(): number {
    return this.options.maxInFlight ?? MAX_LOOKUPS_IN_FLIGHT;
  }

  private get waitMs(): number {
    return this.options.waitMs ?? LOOKUP_WAIT_MS;
  }

  private leaveQueue(start: () => void): void {
    const at = this.waiting.indexOf(start);
    if (at >= 0) this.waiting.splice(at, 1);
  }
}
