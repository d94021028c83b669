import {
  type AddMessageInput,
  AddMessageResponse,
  AgentListResponse,
  AgentRunResponse,
  ConversationDetailResponse,
  ConversationListResponse,
  ConversationResponse,
  HealthResponse,
  RootResponse,
  SaveMessagesResponse,
  type AgentRunRequest,
  type CreateConversationRequest,
  type SaveMessagesRequest,
} from '@mada/protocol';
import { readJsonFrames } from '../stream/sse-reader.js';
import { ApiError, UnexpectedResponseError } from './errors.js';
import { openRequest, type OpenResponse, type RequestLimits } from './http.js';

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
  constructor(private readonly options: ApiClientOptions) {}

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

  createConversation(request: Partial<CreateConversationRequest>): Promise<ConversationResponse> {
    return this.call('POST', '/conversations/', ConversationResponse, { body: request });
  }

  listConversations(limit: number, offset = 0): Promise<ConversationListResponse> {
    return this.call('GET', `/conversations/?limit=${limit}&offset=${offset}`, ConversationListResponse);
  }

  conversation(id: string): Promise<ConversationDetailResponse> {
    return this.call('GET', `/conversations/${encodeURIComponent(id)}`, ConversationDetailResponse);
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

  /** A conversation turn as events (the conversation keeps its memory). */
  streamTurn(id: string, request: AddMessageInput, signal?: AbortSignal): Promise<Frames> {
    return this.stream(`/conversations/${encodeURIComponent(id)}/stream`, request, signal);
  }

  /** A one-off agent run as events (SPEC.md's path, no memory). */
  streamAgent(request: AgentRunRequest, signal?: AbortSignal): Promise<Frames> {
    return this.stream('/agents/stream', request, signal);
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

  private open(method: string, path: string, options: CallOptions): Promise<OpenResponse> {
    const headers: Record<string, string> = { accept: options.speed === 'stream' ? 'text/event-stream' : 'application/json' };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (this.options.apiKey) headers['x-api-key'] = this.options.apiKey;
    const init: RequestInit = { method, headers };
    if (options.body !== undefined) init.body = JSON.stringify(options.body);
    return openRequest(this.url(path), init, this.limits(options.speed ?? 'quick', options.signal));
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
