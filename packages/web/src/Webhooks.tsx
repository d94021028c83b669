import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import type {
  CreatedWebhookResponse,
  CreateWebhookRequest,
  WebhookDelivery,
  WebhookDeliveryListResponse,
  WebhookEvent,
  WebhookListResponse,
  WebhookResponse,
} from '@mada/protocol';
import { exactText, WEBHOOK_EVENTS } from '@mada/protocol/browser';
import { api } from './api.js';
import { ErrorLine, ShownOnce } from './feedback.js';
import { shortTime } from './time.js';

const WEBHOOKS_KEY = ['me', 'webhooks'] as const;

/** How many deliveries a webhook shows here; the route has the last 100. */
const SHOWN_DELIVERIES = 10;

export const EVENT_LABELS: Record<WebhookEvent, string> = {
  approval_requested: 'A run asks for an approval',
  run_ended: 'A run ends',
};

/** How one delivery went: the receiver's status code, the kind of failure before one, and when it is tried next. */
export function deliveryOutcome(delivery: WebhookDelivery): string {
  const answer = delivery.last_status_code === null ? delivery.last_error : `HTTP ${delivery.last_status_code}`;
  const tries = `${delivery.attempts} ${delivery.attempts === 1 ? 'try' : 'tries'}`;
  const next = delivery.status === 'pending' && delivery.next_attempt_at ? ` · next ${shortTime(delivery.next_attempt_at)}` : '';
  return `${tries}${answer ? ` · ${answer}` : ''}${next}`;
}

/** A webhook's recent deliveries, read when asked for. */
function Deliveries({ webhook }: { webhook: WebhookResponse }) {
  const deliveries = useQuery({
    queryKey: [...WEBHOOKS_KEY, webhook.id, 'deliveries'],
    queryFn: () => api<WebhookDeliveryListResponse>('GET', `/me/webhooks/${encodeURIComponent(webhook.id)}/deliveries`),
    refetchInterval: 10_000,
  });
  if (deliveries.error) return <ErrorLine error={deliveries.error} />;
  if (!deliveries.data) return <p aria-busy="true">Loading…</p>;
  if (deliveries.data.deliveries.length === 0) return <p className="small">No deliveries yet.</p>;
  return (
    <ul className="plain" aria-label={`Deliveries to ${exactText(webhook.url)}`}>
      {deliveries.data.deliveries.slice(0, SHOWN_DELIVERIES).map((delivery) => (
        <li key={delivery.id} className="small">
          {shortTime(delivery.created_at)} · {delivery.event} · <strong className="status">{delivery.status}</strong> · {deliveryOutcome(delivery)}
        </li>
      ))}
    </ul>
  );
}

function WebhookItem({ webhook, onDelete, deleting }: { webhook: WebhookResponse; onDelete: () => void; deleting: boolean }) {
  const [open, setOpen] = useState(false);
  const url = exactText(webhook.url);
  return (
    <li>
      <span className="url">{url}</span>
      <span className="small">
        {webhook.events.join(', ')} · created {shortTime(webhook.created_at)}
      </span>
      <div className="row">
        <button type="button" className="quiet" aria-expanded={open} aria-label={`Deliveries to ${url}`} onClick={() => setOpen(!open)}>
          {open ? 'Hide deliveries' : 'Deliveries'}
        </button>
        <button type="button" className="deny" aria-label={`Delete the webhook to ${url}`} disabled={deleting} onClick={onDelete}>
          Delete
        </button>
      </div>
      {open ? <Deliveries webhook={webhook} /> : null}
    </li>
  );
}

/** The caller's webhooks: a new one's secret is shown here once, and never again. */
export function Webhooks() {
  const id = useId();
  const client = useQueryClient();
  const webhooks = useQuery({ queryKey: WEBHOOKS_KEY, queryFn: () => api<WebhookListResponse>('GET', '/me/webhooks'), retry: false });
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<ReadonlySet<WebhookEvent>>(new Set(WEBHOOK_EVENTS));
  const [created, setCreated] = useState<CreatedWebhookResponse | null>(null);
  const create = useMutation({
    mutationFn: (body: CreateWebhookRequest) => api<CreatedWebhookResponse>('POST', '/me/webhooks', body),
    onSuccess: (webhook) => {
      setCreated(webhook);
      setUrl('');
    },
    onSettled: () => client.invalidateQueries({ queryKey: WEBHOOKS_KEY }),
  });
  const remove = useMutation({
    mutationFn: (webhookId: string) => api<undefined>('DELETE', `/me/webhooks/${encodeURIComponent(webhookId)}`),
    onSettled: () => client.invalidateQueries({ queryKey: WEBHOOKS_KEY }),
  });
  const toggle = (event: WebhookEvent, on: boolean): void => {
    const next = new Set(events);
    if (on) next.add(event);
    else next.delete(event);
    setEvents(next);
  };
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    // In the schema's order, whatever order the boxes were ticked in.
    create.mutate({ url: url.trim(), events: WEBHOOK_EVENTS.filter((name) => events.has(name)) });
  };

  return (
    <section aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Webhooks</h2>
      <p className="small">The service posts to these when a run of yours asks for an approval or ends, signed with the webhook&apos;s secret.</p>
      <ErrorLine error={webhooks.error} />
      {webhooks.data?.webhooks.length === 0 ? <p className="small">No webhooks yet.</p> : null}
      <ul className="runs" aria-label="My webhooks">
        {webhooks.data?.webhooks.map((webhook) => (
          <WebhookItem key={webhook.id} webhook={webhook} deleting={remove.isPending} onDelete={() => remove.mutate(webhook.id)} />
        ))}
      </ul>
      <ErrorLine error={remove.error} />
      {created ? (
        <ShownOnce label="New webhook secret" value={created.secret} onDone={() => setCreated(null)}>
          The secret of the webhook to <span className="url">{exactText(created.url)}</span>. Copy it now: it is shown this once. Each delivery carries{' '}
          <code>X-Mada-Signature: sha256=</code> and the HMAC-SHA256 of its body with it.
        </ShownOnce>
      ) : null}
      <form className="card" onSubmit={submit}>
        <label htmlFor={`${id}-url`}>Webhook URL</label>
        <input id={`${id}-url`} type="url" required maxLength={2048} placeholder="https://ntfy.sh/my-approvals" value={url} onChange={(event) => setUrl(event.target.value)} />
        <fieldset>
          <legend>Post when</legend>
          {WEBHOOK_EVENTS.map((name) => (
            <label key={name} className="check">
              <input type="checkbox" checked={events.has(name)} onChange={(event) => toggle(name, event.target.checked)} />
              {EVENT_LABELS[name]}
            </label>
          ))}
        </fieldset>
        <div className="row">
          <button type="submit" className="approve" disabled={create.isPending || url.trim() === '' || events.size === 0}>
            Add webhook
          </button>
        </div>
        <ErrorLine error={create.error} />
      </form>
    </section>
  );
}
