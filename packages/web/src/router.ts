import { useSyncExternalStore } from 'react';

/** The console's views are paths under /app/ (so a reload or a shared link opens the same view). */
export const BASE = '/app';

const subscribe = (notify: () => void): (() => void) => {
  window.addEventListener('popstate', notify);
  return () => window.removeEventListener('popstate', notify);
};

/** The path after /app, always starting with `/`. */
const current = (): string => {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : '/';
  return path === '' ? '/' : path;
};

export function usePath(): string {
  return useSyncExternalStore(subscribe, current);
}

export function navigate(path: string): void {
  window.history.pushState(null, '', `${BASE}${path}`);
  window.dispatchEvent(new PopStateEvent('popstate'));
}
