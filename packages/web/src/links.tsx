import type { ReactNode } from 'react';
import { BASE, navigate } from './router.js';

/** A link to a view of the console: a real href (open in a new tab, copy), followed in place. */
export function AppLink({ to, current, className, children }: { to: string; current?: boolean; className?: string; children: ReactNode }) {
  return (
    <a
      href={`${BASE}${to}`}
      className={className}
      aria-current={current ? 'page' : undefined}
      onClick={(event) => {
        // A click with a modifier opens a tab as any link does.
        if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
        event.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}
