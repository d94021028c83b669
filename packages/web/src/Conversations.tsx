import { useMutation, useQuery } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import type { AgentListResponse, ConversationListResponse, ConversationResponse, CreateConversationRequest, MeResponse } from '@mada/protocol';
import { exactText } from '@mada/protocol/browser';
import { api, ApiError } from './api.js';
import { AppLink } from './links.js';
import { navigate } from './router.js';
import { shortTime } from './time.js';

export const CONVERSATIONS_KEY = ['conversations'] as const;

/** The agents the service offers, for the choice of a new conversation's agent. */
function useAgents() {
  return useQuery({ queryKey: ['agents'], queryFn: () => api<AgentListResponse>('GET', '/agents/'), staleTime: Infinity });
}

/** A new conversation: its agent and its working directory (one of the caller's workspace, by default). */
function NewConversation() {
  const id = useId();
  const me = useQuery({ queryKey: ['me'], queryFn: () => api<MeResponse>('GET', '/me') });
  const agents = useAgents();
  const [agent, setAgent] = useState('task');
  const [dir, setDir] = useState<string | null>(null);
  const [title, setTitle] = useState('');
  const workingDir = dir ?? me.data?.workspace.paths[0] ?? '';
  const create = useMutation({
    mutationFn: (body: CreateConversationRequest) => api<ConversationResponse>('POST', '/conversations/', body),
    onSuccess: (conversation) => navigate(`/conversations/${conversation.id}`),
  });
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    create.mutate({ agent_type: agent, working_dir: workingDir, title: title.trim() === '' ? null : title.trim() });
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>New conversation</h2>
      <label htmlFor={`${id}-agent`}>Agent</label>
      <select id={`${id}-agent`} value={agent} onChange={(event) => setAgent(event.target.value)}>
        {(agents.data?.agents ?? [{ name: 'task', description: '' }]).map((option) => (
          <option key={option.name} value={option.name}>
            {option.name}
            {option.description === '' ? '' : `: ${option.description}`}
          </option>
        ))}
      </select>
      <label htmlFor={`${id}-dir`}>Working directory</label>
      <input id={`${id}-dir`} type="text" required spellCheck={false} value={workingDir} list={`${id}-paths`} onChange={(event) => setDir(event.target.value)} />
      <datalist id={`${id}-paths`}>
        {me.data?.workspace.paths.map((path) => (
          <option key={path} value={path} />
        ))}
      </datalist>
      <label htmlFor={`${id}-name`}>Title (optional)</label>
      <input id={`${id}-name`} type="text" maxLength={255} value={title} onChange={(event) => setTitle(event.target.value)} />
      <div className="row">
        <button type="submit" className="approve" disabled={create.isPending || workingDir === ''}>
          Start conversation
        </button>
      </div>
      {create.error ? (
        <p role="alert" className="error">
          {create.error instanceof ApiError ? create.error.detail : create.error.message}
        </p>
      ) : null}
    </form>
  );
}

/** The caller's conversations, most recently active first. */
export function Conversations() {
  const list = useQuery({ queryKey: CONVERSATIONS_KEY, queryFn: () => api<ConversationListResponse>('GET', '/conversations/?limit=100') });
  return (
    <section aria-labelledby="conversations-title">
      <h1 id="conversations-title">Conversations</h1>
      <NewConversation />
      {list.error ? (
        <p role="alert" className="error">
          {list.error.message}
        </p>
      ) : null}
      {list.data && list.data.conversations.length === 0 ? <p>No conversation yet.</p> : null}
      <ul className="runs">
        {list.data?.conversations.map((conversation) => (
          <li key={conversation.id}>
            <AppLink to={`/conversations/${conversation.id}`}>{exactText(conversation.title ?? 'Untitled conversation')}</AppLink>
            <span className="small">
              {conversation.agent_type} · <span className="path">{exactText(conversation.working_dir)}</span> · {shortTime(conversation.updated_at ?? conversation.created_at)}
            </span>
          </li>
        ))}
      </ul>
      {list.data && list.data.total > list.data.conversations.length ? (
        <p className="small">The {list.data.conversations.length} most recent of {list.data.total} are shown.</p>
      ) : null}
    </section>
  );
}
