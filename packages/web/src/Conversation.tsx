import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import type { ConversationListResponse, ConversationRunInput, MessagePageResponse, MessageResponse, PermissionMode, RunResponse } from '@mada/protocol';
import { exactText, PERMISSION_MODES } from '@mada/protocol/browser';
import { api, ApiError } from './api.js';
import { CONVERSATIONS_KEY } from './Conversations.js';
import { EventList, useRunEvents } from './events.js';
import { AppLink } from './links.js';
import { Markdown } from './Markdown.js';
import { shortTime } from './time.js';

/** Messages asked for at a time; older ones come a page at a time on demand. */
const PAGE = 30;

function Message({ message }: { message: MessageResponse }) {
  const who = message.role === 'user' ? 'You' : message.role === 'assistant' ? 'Agent' : 'Summary';
  return (
    <li className={`message ${message.role}${message.is_summary && message.role !== 'summary' ? ' summarized' : ''}`}>
      <p className="small">
        {who} · {shortTime(message.created_at)}
        {message.is_summary && message.role !== 'summary' ? ' · summarized' : ''}
      </p>
      {message.role === 'user' ? <p className="answer">{exactText(message.content)}</p> : <Markdown text={message.content} />}
    </li>
  );
}

/** The turn running now (or the last one): its events as they arrive, as on its run page. */
function LiveTurn({ run, onEnded }: { run: RunResponse; onEnded: () => void }) {
  const { events, ended } = useRunEvents(run.id, () => undefined);
  // Told once, when the turn ends, whatever the parent renders meanwhile.
  const told = useRef(onEnded);
  told.current = onEnded;
  useEffect(() => {
    if (ended) told.current();
  }, [ended]);
  return (
    <section aria-labelledby="turn-title" className="turn">
      <h2 id="turn-title">{ended ? 'Last turn' : 'Turn in progress'}</h2>
      <EventList events={events} label="Events of the turn" />
      <p className="small">
        <AppLink to={`/runs/${run.id}`}>Open the run</AppLink>
      </p>
    </section>
  );
}

/** One conversation: its messages a page at a time (newest last), and a turn to send. */
export function Conversation({ conversationId }: { conversationId: string }) {
  const id = useId();
  const client = useQueryClient();
  const base = `/conversations/${encodeURIComponent(conversationId)}`;
  const messagesKey = ['messages', conversationId];
  // What the conversation is (title, agent, directory) comes from the list the console already has.
  const list = useQuery({ queryKey: CONVERSATIONS_KEY, queryFn: () => api<ConversationListResponse>('GET', '/conversations/?limit=100') });
  const conversation = list.data?.conversations.find((one) => one.id === conversationId);
  const messages = useInfiniteQuery({
    queryKey: messagesKey,
    queryFn: ({ pageParam }) => api<MessagePageResponse>('GET', `${base}/messages?limit=${PAGE}${pageParam === '' ? '' : `&before=${encodeURIComponent(pageParam)}`}`),
    initialPageParam: '',
    getNextPageParam: (page) => (page.has_more && page.messages.length > 0 ? page.messages[0]!.id : undefined),
  });
  const [content, setContent] = useState('');
  const [mode, setMode] = useState<PermissionMode>('default');
  const [turn, setTurn] = useState<RunResponse | null>(null);
  const [turnEnded, setTurnEnded] = useState(true);
  const send = useMutation({
    mutationFn: (body: ConversationRunInput) => api<RunResponse>('POST', `${base}/runs`, body),
    onSuccess: (run) => {
      setContent('');
      setTurnEnded(false);
      setTurn(run);
      // The user's message is stored before the answer: it shows at once.
      void client.invalidateQueries({ queryKey: messagesKey });
    },
  });
  const onEnded = (): void => {
    setTurnEnded(true);
    void client.invalidateQueries({ queryKey: messagesKey });
    void client.invalidateQueries({ queryKey: CONVERSATIONS_KEY });
  };
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    if (content.trim() !== '') send.mutate({ content, mode });
  };

  // Pages arrive newest first, each oldest first inside: shown oldest to newest.
  const shown = messages.data ? messages.data.pages.slice().reverse().flatMap((page) => page.messages) : [];
  const error = messages.error ?? send.error;
  return (
    <section aria-labelledby="conversation-title">
      <h1 id="conversation-title">{exactText(conversation?.title ?? 'Conversation')}</h1>
      {conversation ? (
        <dl>
          <dt>Agent</dt>
          <dd>{conversation.agent_type}</dd>
          <dt>Working directory</dt>
          <dd className="path">{exactText(conversation.working_dir)}</dd>
          <dt>Tokens</dt>
          <dd>{conversation.total_tokens}</dd>
        </dl>
      ) : null}
      {messages.hasNextPage ? (
        <button type="button" className="quiet" disabled={messages.isFetchingNextPage} onClick={() => void messages.fetchNextPage()}>
          Older messages
        </button>
      ) : null}
      {messages.data && shown.length === 0 ? <p>No message yet.</p> : null}
      <ol className="messages" aria-label="Messages">
        {shown.map((message) => (
          <Message key={message.id} message={message} />
        ))}
      </ol>
      {turn ? <LiveTurn key={turn.id} run={turn} onEnded={onEnded} /> : null}
      <form onSubmit={submit} className="card">
        <label htmlFor={`${id}-message`}>Message</label>
        <textarea id={`${id}-message`} rows={3} value={content} onChange={(event) => setContent(event.target.value)} />
        <div className="row">
          <label htmlFor={`${id}-mode`} className="inline">
            Mode
          </label>
          <select id={`${id}-mode`} value={mode} onChange={(event) => setMode(event.target.value as PermissionMode)}>
            {PERMISSION_MODES.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
          <button type="submit" className="approve" disabled={send.isPending || !turnEnded || content.trim() === ''}>
            Send
          </button>
        </div>
      </form>
      {error ? (
        <p role="alert" className="error">
          {error instanceof ApiError ? error.detail : error.message}
        </p>
      ) : null}
    </section>
  );
}
