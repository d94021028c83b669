import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds; from a fast local call up to a long agent run. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

export type RunStatus = 'succeeded' | 'failed' | 'cancelled' | 'interrupted';
export type CallOutcome = 'ok' | 'error' | 'cancelled';
export type ToolOutcome = CallOutcome | 'timeout';
export type TokenSource = 'reported' | 'counted';

/**
 * Every instrument the service exports, on a registry of its own: two apps in one process (the
 * tests) never share counts. Label values are always drawn from bounded sets (route patterns,
 * agent and tool names the service defines, statuses), never from a URL, an id or a user.
 */
export class ServiceMetrics {
  readonly registry = new Registry();

  readonly httpRequests = this.counter('mada_http_requests_total', 'HTTP requests answered, by method, route pattern and status code', ['method', 'route', 'status']);
  readonly httpDuration = this.durations(
    'mada_http_request_duration_seconds',
    'Time from request to response end (for event streams: the stream lifetime)',
    ['method', 'route', 'status'],
  );

  readonly runs = this.counter('mada_agent_runs_total', 'Agent runs ended, by agent and final status', ['agent', 'status']);
  readonly runsActive = new Gauge({ name: 'mada_agent_runs_active', help: 'Agent runs in progress', labelNames: ['agent'] as const, registers: [this.registry] });
  /** Read at scrape time: the run queue of this process (services.ts). */
  private readonly runsQueued = this.summed('mada_agent_runs_queued', 'Runs waiting for a place to execute (MAX_CONCURRENT_RUNS, MAX_RUNS_PER_USER)');
  /** Read at scrape time: the approvals store. */
  private readonly approvalsPending = this.summed('mada_approvals_pending', 'Tool calls waiting for a user to approve or deny them');
  readonly runDuration = this.durations('mada_agent_run_duration_seconds', 'Wall time of agent runs, by agent and final status', ['agent', 'status']);

  readonly toolCalls = this.counter('mada_tool_calls_total', 'Tool executions, by tool and outcome (ok, error, timeout, cancelled)', ['tool', 'outcome']);
  readonly toolDuration = this.durations('mada_tool_call_duration_seconds', 'Wall time of tool executions, by tool and outcome', ['tool', 'outcome']);

  // `model` is a configured model's name (LLM_MODELS), never what a client sent.
  readonly modelCalls = this.counter('mada_model_calls_total', 'Calls to the model runtime, by model, kind (complete, stream) and outcome', ['model', 'kind', 'outcome']);
  readonly modelLatency = this.durations(
    'mada_model_call_duration_seconds',
    'Time from request to the whole answer (retries included), by model, kind and outcome',
    ['model', 'kind', 'outcome'],
  );
  readonly modelFirstToken = this.durations('mada_model_first_token_seconds', 'Time from a streamed request to its first part, by model', ['model']);
  readonly inputTokens = this.counter(
    'mada_model_input_tokens_total',
    'Prompt tokens sent to the model runtime, by model: as it reported them, or counted with cl100k_base when it did not',
    ['model', 'source'],
  );
  readonly outputTokens = this.counter(
    'mada_model_output_tokens_total',
    'Tokens the model runtime generated, by model: as it reported them, or counted with cl100k_base when it did not',
    ['model', 'source'],
  );

  /** Open event streams, one source per app serving this service. */
  private readonly sseStreams = this.summed('mada_sse_streams_open', 'Server-Sent Events responses currently open');

  constructor() {
    // Unprefixed (process_*, nodejs_*), as the usual dashboards for Node services expect them.
    collectDefaultMetrics({ register: this.registry });
  }

  /** Adds a source of open streams; the returned function removes it. */
  countStreams(count: () => number): () => void {
    return this.sseStreams.add(count);
  }

  /** A run began executing (it left the queue). */
  runStarted(agent: string): void {
    this.runsActive.inc({ agent });
  }

  /**
   * One run over, however it ended: counted by agent and status, with its wall time (its wait,
   * for one that ended before it executed).
   */
  runEnded(agent: string, status: RunStatus, seconds: number, executed: boolean): void {
    if (executed) this.runsActive.dec({ agent });
    this.runs.inc({ agent, status });
    this.runDuration.observe({ agent, status }, seconds);
  }

  /** Adds a source of queued runs; the returned function removes it. */
  countQueuedRuns(count: () => number): () => void {
    return this.runsQueued.add(count);
  }

  /** Adds a source of pending approvals; the returned function removes it. */
  countPendingApprovals(count: () => number): () => void {
    return this.approvalsPending.add(count);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text exposition of every instrument. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  private counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  private durations<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Histogram<L> {
    return new Histogram({ name, help, labelNames, buckets: DURATION_BUCKETS, registers: [this.registry] });
  }

  /** A gauge whose value is the sum of its sources, read at scrape time; a source can come and go. */
  private summed(name: string, help: string): { add(count: () => number): () => void } {
    const sources = new Set<() => number>();
    // Registered on the registry, which reads it at scrape time: nothing else needs to hold it.
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect(): void {
        this.set([...sources].reduce((total, count) => total + count(), 0));
      },
    });
    return {
      add(count) {
        sources.add(count);
        return () => sources.delete(count);
      },
    };
  }
}
