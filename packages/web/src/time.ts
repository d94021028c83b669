import { useEffect, useState } from 'react';

/** The current time, updated every second while the component is shown. */
export function useNow(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

/** `4 min 05 s left`, or `expired`. */
export function timeLeft(expiresAt: string, now: number): string {
  const seconds = Math.floor((Date.parse(expiresAt) - now) / 1000);
  if (!(seconds > 0)) return 'expired';
  const minutes = Math.floor(seconds / 60);
  const rest = String(seconds % 60).padStart(2, '0');
  return minutes > 0 ? `${minutes} min ${rest} s left` : `${seconds} s left`;
}

export function shortTime(iso: string): string {
  return new Date(iso).toLocaleString();
}
