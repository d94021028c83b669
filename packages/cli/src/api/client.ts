import { randomUUID } from 'node:crypto';
import {
  type AddMessageInput,
  RevertResponse,
  RunChangesResponse,
  AddMessageResponse,
  AgentListResponse,
  ModelListResponse,
  AgentRunResponse,
  ApprovalListResponse,
  ApprovalResponse,
  CancelledRunResponse,
  ConversationListResponse,
  CreatedKeyResponse,
  CreatedWebhookResponse,
  KeyListResponse,
  WebhookDeliveryListResponse,
  WebhookListResponse,
  type CreateWebhookRequest,
  MeResponse,
  ConversationResponse,
  HealthResponse,
  MessagePageResponse,
  RootResponse,
  RunListResponse,
  RunResponse,
  SaveMessagesResponse,
  type ConversationRunInput,
  type StartRunInput,
  type RunStatus,
  type AgentRunRequest,
  type ApprovalStatus,
  type CreateConversationRequest,
  type DecideApprovalRequest,
  type SaveMessagesRequest,
} from '@mada/protocol';
import { readJsonFrames, readRunFrames, type RunFrame } from '../stream/sse-reader.js';
import { ApiError, RequestCancelledError, UnexpectedResponseError } from './errors.js';
import { openRequest, type OpenResponse, type RequestLimits } from './http.js';

/**
 * Where the messages begin in a detail body. Inside a JSON string every quote is escaped, so this
 * run of characters can only be the key itself.
 */
const MESSAGES_START = ',"messages":[';

/** The body up to and including `marker` (or all of it); the rest is never downloaded. */
async function readUntil(open: OpenResponse, marker: string): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  // Leaving the loop early cancels the body and releases the connection.
  for await (const chunk of open.chunks()) {
    text += decoder.decode(chunk, { stream: true });
    if (text.includes(marker)) return text;
  }
  return text + decoder.decode();
}

export interface ApiClientOptions {
  baseUrl: string;
  apiKey?: string | undefined;
  connectTimeoutMs: number;
  streamTimeoutMs: number;
}

/** The parts of a zod schema the client uses. */
interface Schema<T> {
  parse(data: unknown): T;
}

type Speed = 'quick' | 'slow' | 'stream';

interface CallOptions {
  body?: unknown;
  signal?: AbortSignal | undefined;
  /** quick: answered at once; slow: answered when an agent run ends; stream: headers at once, then events. */
  speed?: Speed;
  /** Statuses answered with a body of the expected schema (GET /health answers 503 that way). */
  acceptStatus?: number[];
  headers?: Record<string, string>;
}

export type Frames = AsyncGenerator<Record<string, unknown>>;

function detailOf(body: unknown): string | undefined {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') return detail;
  // FastAPI's validation shape: [{loc, msg, type}]
  if (Array.isArray(detail)) {
    return detail
      .map((issue: { loc?: unknown; msg?: unknown }) => {
        const loc = Array.isArray(issue.loc) ? issue.loc.filter((part) => part !== 'body').join('.') : '';
        return loc ? `${loc}: ${String(issue.msg)}` : String(issue.msg);
      })
      .join('; ');
  }
  return undefined;
}

/** A typed client over fetch: every response is checked against the @mada/protocol schema. */
export class ApiClient {
  /** The run started last (a conversation run, or one a legacy route named in `X-Run-Id`): what chat's /diff and /undo act on. */
  private lastRun: string | undefined;

  constructor(private readonly options: ApiClientOptions) {}

  get lastRunId(): string | undefined {
    return this.lastRun;
  }

  /** What a run changed in its working directory. */
  runChanges(runId: string): Promise<RunChangesResponse> {
    return this.call('GET', `/runs/${encodeURIComponent(runId)}/changes`, RunChangesResponse);
  }

  /** Puts back every file the run changed; `force` also over files changed since. */
  revertRun(runId: string, force: boolean): Promise<RevertResponse> {
    return this.call('POST', `/runs/${encodeURIComponent(runId)}/revert`, RevertResponse, { body: { force } });
  }

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  root(): Promise<RootResponse> {
    return this.call('GET', '/', RootResponse);
  }

  health(): Promise<HealthResponse> {
    return this.call('GET', '/health', HealthResponse, { acceptStatus: [503] });
  }

  agents(): Promise<AgentListResponse> {
    return this.call('GET', '/agents/', AgentListResponse);
  }

  /** The models runs and conversations may name (services from before models could be chosen answer 404). */
  models(): Promise<ModelListResponse> {
    return this.call('GET', '/models', ModelListResponse);
  }

  createConversation(request: Partial<CreateConversationRequest>): Promise<ConversationResponse> {
    return this.call('POST', '/conversations/', ConversationResponse, { body: request });
  }

  listConversations(limit: number, offset = 0): Promise<ConversationListResponse> {
    return this.call('GET', `/conversations/?limit=${limit}&offset=${offset}`, ConversationListResponse);
  }

  /**
   * A conversation's own fields without its messages: the detail is read only up to where the
   * messages begin (the service writes them last), so resuming a long session stays quick.
   */
  async conversation(id: string): Promise<ConversationResponse> {
    const path = `/conversations/${encodeURIComponent(id)}`;
    const open = await this.open('GET', path, {});
    if (!open.response.ok) throw await this.errorFrom('GET', path, open);
    const text = await readUntil(open, MESSAGES_START);
    const head = text.includes(MESSAGES_START) ? `${text.slice(0, text.indexOf(MESSAGES_START))}}` : text;
    try {
      return ConversationResponse.parse(JSON.parse(head));
    } catch {
      throw new UnexpectedResponseError(this.url(path), `${open.response.status} with a body that is not what mada sends`);
    }
  }

  /** The latest `limit` messages, oldest first, and whether older ones exist. */
  recentMessages(id: string, limit: number): Promise<MessagePageResponse> {
    return this.call('GET', `/conversations/${encodeURIComponent(id)}/messages?limit=${limit}`, MessagePageResponse);
  }

  addMessage(id: string, request: AddMessageInput, signal?: AbortSignal): Promise<AddMessageResponse> {
    const path = `/conversations/${encodeURIComponent(id)}/messages`;
    return this.call('POST', path, AddMessageResponse, { body: request, signal, speed: 'slow' });
  }

  saveMessages(id: string, request: SaveMessagesRequest, signal?: AbortSignal): Promise<SaveMessagesResponse> {
    return this.call('POST', `/conversations/${encodeURIComponent(id)}/save`, SaveMessagesResponse, { body: request, signal });
  }

  runAgent(request: AgentRunRequest, signal?: AbortSignal): Promise<AgentRunResponse> {
    return this.call('POST', '/agents/run', AgentRunResponse, { body: request, signal, speed: 'slow' });
  }

  /** The caller's approvals, newest first; `pending` ones wait for an answer. */
  listApprovals(status?: ApprovalStatus): Promise<ApprovalListResponse> {
    return this.call('GET', `/approvals${status ? `?status=${status}` : ''}`, ApprovalListResponse);
  }

  /** Answers an approval; the waiting run goes on. */
  decideApproval(id: string, request: DecideApprovalRequest): Promise<ApprovalResponse> {
    return this.call('POST', `/approvals/${encodeURIComponent(id)}`, ApprovalResponse, { body: request });
  }

  /** A conversation turn as events (the conversation keeps its memory). */
  streamTurn(id: string, request: AddMessageInput, signal?: AbortSignal): Promise<Frames> {
    return this.stream(`/conversations/${encodeURIComponent(id)}/stream`, request, signal);
  }

  /** A one-off agent run as events (`POST /agents/stream`, no memory). */
  streamAgent(request: AgentRunRequest, signal?: AbortSignal): Promise<Frames> {
    return this.stream('/agents/stream', request, signal);
  }

  listRuns(limit: number, status?: RunStatus, offset = 0): Promise<RunListResponse> {
    const filter = status === undefined ? '' : `&status=${status}`;
    const from = offset === 0 ? '' : `&offset=${offset}`;
    return this.call('GET', `/runs?limit=${limit}${filter}${from}`, RunListResponse);
  }

  run(id: string): Promise<RunResponse> {
    return this.call('GET', `/runs/${encodeURIComponent(id)}`, RunResponse);
  }

  /**
   * Answers once the run has stopped (or, on another replica, once it is marked to stop). An
   * admin cancelling another user's run gets it without its prompt and response.
   */
  cancelRun(id: string): Promise<CancelledRunResponse> {
    return this.call('POST', `/runs/${encodeURIComponent(id)}/cancel`, CancelledRunResponse, { speed: 'slow' });
  }

  /** Who the key is: role, workspace, quotas and today's usage. */
  me(): Promise<MeResponse> {
    return this.call('GET', '/me', MeResponse);
  }

  listKeys(): Promise<KeyListResponse> {
    return this.call('GET', '/me/keys', KeyListResponse);
  }

  /** A new key for the caller; the answer is the only place the key itself appears. */
  createKey(name: string, expiresInDays?: number): Promise<CreatedKeyResponse> {
    return this.call('POST', '/me/keys', CreatedKeyResponse, { body: { name, ...(expiresInDays === undefined ? {} : { expires_in_days: expiresInDays }) } });
  }

  revokeKey(id: string): Promise<void> {
    return this.delete(`/me/keys/${encodeURIComponent(id)}`);
  }

  listWebhooks(): Promise<WebhookListResponse> {
    return this.call('GET', '/me/webhooks', WebhookListResponse);
  }

  /** A new webhook; the answer is the only place its secret appears. */
  createWebhook(request: CreateWebhookRequest): Promise<CreatedWebhookResponse> {
    return this.call('POST', '/me/webhooks', CreatedWebhookResponse, { body: request });
  }

  deleteWebhook(id: string): Promise<void> {
    return this.delete(`/me/webhooks/${encodeURIComponent(id)}`);
  }

  /** The webhook's last 100 deliveries, newest first. */
  webhookDeliveries(id: string): Promise<WebhookDeliveryListResponse> {
    return this.call('GET', `/me/webhooks/${encodeURIComponent(id)}/deliveries`, WebhookDeliveryListResponse);
  }

  /** A DELETE answered 204, no body to parse. */
  private async delete(path: string): Promise<void> {
    const open = await this.open('DELETE', path, {});
    if (!open.response.ok) throw await this.errorFrom('DELETE', path, open);
    await open.text();
  }

  /**
   * Starts a conversation turn as a stored run; its events come from `runEvents`. Cancelled while
   * the POST is in flight (Ctrl-C), the run may exist on the service all the same, and nobody would
   * know its id: the same request again under the same Idempotency-Key names it (or starts it, if
   * the first never arrived), and it is cancelled before the cancellation is passed on.
   */
  startConversationRun(id: string, request: ConversationRunInput, signal?: AbortSignal): Promise<RunResponse> {
    return this.startRunAt(`/conversations/${encodeURIComponent(id)}/runs`, request, signal);
  }

  /** A one-off run (`POST /runs`), started as startConversationRun starts a turn. */
  startRun(request: StartRunInput, signal?: AbortSignal): Promise<RunResponse> {
    return this.startRunAt('/runs', request, signal);
  }

  private async startRunAt(path: string, request: ConversationRunInput | StartRunInput, signal: AbortSignal | undefined): Promise<RunResponse> {
    const headers = { 'idempotency-key': randomUUID() };
    let run: RunResponse;
    try {
      run = await this.call('POST', path, RunResponse, { body: request, signal, headers });
    } catch (error) {
      if (error instanceof RequestCancelledError) await this.stopUnseenRun(path, request, headers);
      throw error;
    }
    this.lastRun = run.id;
    return run;
  }

  private async stopUnseenRun(path: string, request: ConversationRunInput | StartRunInput, headers: Record<string, string>): Promise<void> {
    try {
      const run = await this.call('POST', path, RunResponse, { body: request, headers });
      await this.cancelRun(run.id);
    } catch (error) {
      // 409 from the cancel: the run ended meanwhile. 409 from the POST: a service without
      // idempotency keys, whose run goes on; either way the Ctrl-C itself must still end the turn.
      if (!(error instanceof ApiError)) throw error;
    }
  }

  /** A run's events after event `after` (0: from the first), replayed and then followed live. */
  async runEvents(id: string, after: number, signal?: AbortSignal): Promise<AsyncGenerator<RunFrame>> {
    const path = `/runs/${encodeURIComponent(id)}/events`;
    const headers = after > 0 ? { 'last-event-id': String(after) } : undefined;
    const open = await this.open('GET', path, { signal, speed: 'stream', ...(headers ? { headers } : {}) });
    if (!open.response.ok) throw await this.errorFrom('GET', path, open);
    return readRunFrames(open.chunks());
  }

  private async stream(path: string, body: unknown, signal: AbortSignal | undefined): Promise<Frames> {
    const open = await this.open('POST', path, { body, signal, speed: 'stream' });
    if (!open.response.ok) throw await this.errorFrom('POST', path, open);
    return readJsonFrames(open.chunks());
  }

  private async call<T>(method: string, path: string, schema: Schema<T>, options: CallOptions = {}): Promise<T> {
    const open = await this.open(method, path, options);
    const accepted = open.response.ok || (options.acceptStatus ?? []).includes(open.response.status);
    if (!accepted) throw await this.errorFrom(method, path, open);
    const text = await open.text();
    try {
      return schema.parse(JSON.parse(text));
    } catch {
      throw new UnexpectedResponseError(this.url(path), `${open.response.status} with a body that is not what mada sends`);
    }
  }

  private async open(method: string, path: string, options: CallOptions): Promise<OpenResponse> {
    const headers: Record<string, string> = {
      ...options.headers,
      accept: options.speed === 'stream' ? 'text/event-stream' : 'application/json',
    };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (this.options.apiKey) headers['x-api-key'] = this.options.apiKey;
    const init: RequestInit = { method, headers };
    if (options.body !== undefined) init.body = JSON.stringify(options.body);
    const open = await openRequest(this.url(path), init, this.limits(options.speed ?? 'quick', options.signal));
    this.lastRun = open.response.headers.get('x-run-id') ?? this.lastRun;
    return open;
  }

  private limits(speed: Speed, signal: AbortSignal | undefined): RequestLimits {
    const { connectTimeoutMs, streamTimeoutMs } = this.options;
    const slow = speed === 'slow';
    return {
      headersMs: slow ? streamTimeoutMs : connectTimeoutMs,
      headersTimeout: slow ? 'stream' : 'connect',
      idleMs: speed === 'quick' ? connectTimeoutMs : streamTimeoutMs,
      ...(signal ? { signal } : {}),
    };
  }

  private async errorFrom(method: string, path: string, open: OpenResponse): Promise<ApiError> {
    const { status, statusText, headers } = open.response;
    let detail: string | undefined;
    try {
      detail = detailOf(JSON.parse(await open.text()));
    } catch {
      detail = undefined;
    }
    const retryAfter = Number(headers.get('retry-after'));
    const seconds = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined;
    return new ApiError(status, detail ?? (statusText || `HTTP ${status}`), method, this.url(path), seconds);
  }

  private url(path: string): string {
    return `${this.options.baseUrl}${path}`;
  }
}
