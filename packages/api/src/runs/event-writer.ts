import type { AgentEvent } from '@mada/protocol';
import type { RunRepository } from '../db/run-repository.js';
import type { Log } from '../util/log.js';
import { encodeEvent } from './encode-event.js';
import type { RunEventBus } from './event-bus.js';
import { isTextFrame, mergeTextFrames } from './text-frames.js';

/** Text frames of one run are stored at most this often; text arriving in between joins the next one. */
export const TEXT_FRAME_INTERVAL_MS = 50;

/**
 * Stores a run's events one after another, in the order they were emitted, and tells followers
 * after each is stored. Emitting never blocks the agent. The run's last event is stored with its
 * end (RunService), not here.
 */
export class EventWriter {
  private chain: Promise<void> = Promise.resolve();
  /** Frames emitted and not yet being stored: text arriving faster than the store takes it joins the last one. */
  private readonly waiting: AgentEvent[] = [];
  /** When the last text frame was stored (performance.now()). */
  private lastTextAt = Number.NEGATIVE_INFINITY;
  toolCalls = 0;

  constructor(
    private readonly runId: string,
    private readonly sink: { store: RunRepository; bus: RunEventBus },
    private readonly now: () => Date,
    private readonly log: Log,
  ) {}

  emit(frame: AgentEvent): void {
    if (frame.event === 'tool_start') this.toolCalls += 1;
    const last = this.waiting.at(-1);
    const merged = last === undefined ? undefined : mergeTextFrames(last, frame);
    if (merged) {
      this.waiting[this.waiting.length - 1] = merged;
      return;
    }
    this.waiting.push(frame);
    this.chain = this.chain.then(async () => {
      if (isTextFrame(this.waiting[0]!)) await this.textTurn();
      const data = encodeEvent(this.waiting.shift()!);
      try {
        // Only while the run is active: after a cancel from elsewhere, nothing follows its last event.
        const stored = await this.sink.store.appendActiveEvent(this.runId, data, this.now());
        if (stored) await this.sink.bus.publish(this.runId, stored);
      } catch (error) {
        this.log.error({ err: error }, 'could not store a run event');
      }
    });
  }

  flushed(): Promise<void> {
    return this.chain;
  }

  /**
   * A run's text is stored as it comes, but at most one text frame per TEXT_FRAME_INTERVAL_MS:
   * text arriving sooner waits and joins the frame. A model sends each token in a read of its
   * own, and every stored frame is a write, a notification and a socket write per follower; at a
   * token every 10 ms, frames of five tokens are half as many as frames of two or three, and
   * twenty frames a second still read as a steady stream. The first text frame goes out at once.
   */
  private async textTurn(): Promise<void> {
    const wait = this.lastTextAt + TEXT_FRAME_INTERVAL_MS - performance.now();
    if (wait > 0) await new Promise<void>((resolve) => setTimeout(resolve, wait));
    this.lastTextAt = performance.now();
  }
}
