import { useState } from 'react';
import type { ApprovalResponse } from '@mada/protocol';
import { describeCall } from '@mada/protocol/browser';
import { navigate } from './router.js';

const supported = (): boolean => typeof window !== 'undefined' && 'Notification' in window;

/**
 * A browser notification for each approval, when the user allowed them: the call as the Inbox
 * names it (invisible characters by name), as text; clicking one brings the Inbox forward.
 */
export function notifyNew(approvals: ApprovalResponse[]): void {
  if (!supported() || Notification.permission !== 'granted') return;
  for (const approval of approvals) {
    const notification = new Notification('mada: approval waiting', { body: describeCall(approval), tag: approval.id });
    notification.onclick = () => {
      window.focus();
      navigate('/');
      notification.close();
    };
  }
}

/**
 * Whether the console may notify, and the way to ask: browsers let a page ask only from a
 * user's gesture, so the Inbox offers a button rather than asking on load.
 */
export function useNotificationPermission(): { permission: NotificationPermission | 'unsupported'; ask: () => void } {
  const [permission, setPermission] = useState<NotificationPermission | 'unsupported'>(() => (supported() ? Notification.permission : 'unsupported'));
  const ask = (): void => {
    if (!supported()) return;
    void Notification.requestPermission().then(setPermission);
  };
  return { permission, ask };
}
