import type { ModelSettings } from './create-model-client.js';
import { introspectRuntime, type RuntimeReport } from './introspection.js';
import type { RuntimeInfo, RuntimeInfoSource } from './runtime-info.js';
import { withDeadline } from '../util/deadline.js';

export const REFRESH_INTERVAL_MS = 5 * 60_000;
const PROBE_TIMEOUT_MS = 5_000;

export interface IntrospectorOptions {
  intervalMs?: number;
  onError?: (error: unknown) => void;
  onChange?: (info: RuntimeInfo) => void;
  fetch?: typeof fetch;
}

/**
 * Keeps the runtime's view current: asked at start-up and every 5 minutes. Until the runtime
 * answers, the window is LLM_NUM_CTX and tool calls are native. The periodic refresh is owned:
 * `stop()` ends the timer, aborts a refresh under way and waits for it.
 */
export class RuntimeIntrospector implements RuntimeInfoSource {
  private info: RuntimeInfo;
  private refusedTools = false;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private readonly stopping = new AbortController();

  constructor(
    private readonly settings: ModelSettings,
    private readonly options: IntrospectorOptions = {},
  ) {
    this.info = { name: settings.llmModel, contextWindow: settings.llmNumCtx, toolCalls: 'native' };
  }

  current(): RuntimeInfo {
    return this.info;
  }

  useTextToolCalls(): void {
    this.refusedTools = true;
    this.update({ ...this.info, toolCalls: 'text' });
  }

  /** The first look (awaited, never throws) and the periodic ones after it. */
  async start(): Promise<void> {
    await this.refresh();
    if (this.stopping.signal.aborted) return;
    this.timer = setInterval(() => void this.refresh(), this.options.intervalMs ?? REFRESH_INTERVAL_MS);
    this.timer.unref();
  }

  /** One look at the runtime; a runtime that does not answer leaves the view as it was. Never throws. */
  refresh(): Promise<void> {
    this.inFlight ??= this.look().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await this.inFlight;
  }

  private async look(): Promise<void> {
    const deadline = withDeadline(this.stopping.signal, PROBE_TIMEOUT_MS);
    try {
      this.apply(await introspectRuntime(this.settings, deadline.signal, this.options.fetch));
    } catch (error) {
      if (!this.stopping.signal.aborted) this.options.onError?.(error);
    } finally {
      deadline.dispose();
    }
  }

  private apply(report: RuntimeReport): void {
    const toolCalls = this.refusedTools ? 'text' : (report.toolCalls ?? 'native');
    // A model the runtime does not have keeps the window it had: it may come back as it was.
    if (report.missing !== undefined) return this.update({ ...this.info, missing: report.missing });
    this.update({ name: this.settings.llmModel, contextWindow: Math.min(this.settings.llmNumCtx, ...report.contextLengths), toolCalls });
  }

  private update(next: RuntimeInfo): void {
    const changed = next.contextWindow !== this.info.contextWindow || next.toolCalls !== this.info.toolCalls || next.missing !== this.info.missing;
    this.info = next;
    if (changed) this.options.onChange?.(next);
  }
}
