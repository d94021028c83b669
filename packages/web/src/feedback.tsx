import type { ReactNode } from 'react';
import { errorText } from './api.js';

/** A failed request's reason, announced; nothing while there is none. */
export function ErrorLine({ error }: { error: Error | null }) {
  return error ? (
    <p role="alert" className="error">
      {errorText(error)}
    </p>
  ) : null;
}

/** A credential the service shows in one answer only (a new key, a webhook's secret): shown until the user says it is copied. */
export function ShownOnce({ label, value, onDone, children }: { label: string; value: string; onDone: () => void; children: ReactNode }) {
  return (
    <div className="card" role="status">
      <p>{children}</p>
      <pre className="call" aria-label={label}>
        {value}
      </pre>
      <button type="button" className="quiet" onClick={onDone}>
        I have copied it
      </button>
    </div>
  );
}
