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
  /** Counters of open event streams, one per app serving this service; summed at scrape time. */
  private readonly streamCounters = new Set<() => number>();
  /** Read at scrape time: the run queue of this process (services.ts). */
  private readonly queuedCounters = new Set<() => number>();
  /** Read at scrape time: the approvals store, once approvals exist (EXTENSIONS.md section 3). */
  private readonly approvalCounters = new Set<() => number>();

  readonly httpRequests = new Counter({
    name: 'mada_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'mada_http_request_duration_seconds',
    help: 'Time from request to response end (for event streams: the stream lifetime)',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly runs = new Counter({
    name: 'mada_agent_runs_total',
    help: 'Agent runs ended, by agent and final status',
    labelNames: ['agent', 'status'] as const,
    registers: [this.registry],
  });

  readonly runsActive = new Gauge({
    name: 'mada_agent_runs_active',
    help: 'Agent runs in progress',
    labelNames: ['agent'] as const,
    registers: [this.registry],
  });

  readonly runsQueued = new Gauge({
    name: 'mada_agent_runs_queued',
    help: 'Runs waiting for a place to execute (MAX_CONCURRENT_RUNS, MAX_RUNS_PER_USER)',
    registers: [this.registry],
    collect: (): void => this.runsQueued.set(sum(this.queuedCounters)),
  });

  readonly approvalsPending = new Gauge({
    name: 'mada_approvals_pending',
    help: 'Tool calls waiting for a user to approve or deny them',
    registers: [this.registry],
    collect: (): void => this.approvalsPending.set(sum(this.approvalCounters)),
  });

  readonly runDuration = new Histogram({
    name: 'mada_agent_run_duration_seconds',
    help: 'Wall time of agent runs, by agent and final status',
    labelNames: ['agent', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly toolCalls = new Counter({
    name: 'mada_tool_calls_total',
    help: 'Tool executions, by tool and outcome (ok, error, timeout, cancelled)',
    labelNames: ['tool', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly toolDuration = new Histogram({
    name: 'mada_tool_call_duration_seconds',
    help: 'Wall time of tool executions, by tool and outcome',
    labelNames: ['tool', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly modelCalls = new Counter({
    name: 'mada_model_calls_total',
    help: 'Calls to the model runtime, by kind (complete, stream) and outcome',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly modelLatency = new Histogram({
    name: 'mada_model_call_duration_seconds',
    help: 'Time from request to the whole answer (retries included), by kind and outcome',
    labelNames: ['kind', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly modelFirstToken = new Histogram({
    name: 'mada_model_first_token_seconds',
    help: 'Time from a streamed request to its first part',
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly inputTokens = new Counter({
    name: 'mada_model_input_tokens_total',
    help: 'Prompt tokens sent to the model runtime: as it reported them, or counted with cl100k_base when it did not',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  readonly outputTokens = new Counter({
    name: 'mada_model_output_tokens_total',
    help: 'Tokens the model runtime generated: as it reported them, or counted with cl100k_base when it did not',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  constructor() {
    // Unprefixed (process_*, nodejs_*), as the usual dashboards for Node services expect them.
    collectDefaultMetrics({ register: this.registry });
  }

  readonly sseStreams = new Gauge({
    name: 'mada_sse_streams_open',
    help: 'Server-Sent Events responses currently open',
    registers: [this.registry],
    collect: (): void => this.sseStreams.set(sum(this.streamCounters)),
  });

  /** Adds a source of open streams; the returned function removes it. */
  countStreams(count: () => number): () => void {
    return addSource(this.streamCounters, count);
  }

  /** One run over, however it ended: counted by agent and status, with its wall time. */
  runEnded(agent: string, status: RunStatus, seconds: number): void {
    this.runs.inc({ agent, status });
    this.runDuration.observe({ agent, status }, seconds);
  }

  /** Adds a source of queued runs; the returned function removes it. */
  countQueuedRuns(count: () => number): () => void {
    return addSource(this.queuedCounters, count);
  }

  /** Adds a source of pending approvals; the returned function removes it. */
  countPendingApprovals(count: () => number): () => void {
    return addSource(this.approvalCounters, count);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text exposition of every instrument. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}

const sum = (sources: ReadonlySet<() => number>): number => [...sources].reduce((total, count) => total + count(), 0);

function addSource(sources: Set<() => number>, count: () => number): () => void {
  sources.add(count);
  return () => sources.delete(count);
}
