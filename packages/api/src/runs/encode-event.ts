/** A frame as it goes on the wire and into the store: JSON with null fields left out. */
export function encodeEvent(frame: object): string {
  // A replacer takes JSON.stringify off its fast path, and most frames (every text frame) hold no
  // null to leave out: under load that replacer was a visible part of storing each token.
  return holdsNull(frame) ? JSON.stringify(frame, leaveOutNull) : JSON.stringify(frame);
}

const leaveOutNull = (_key: string, value: unknown): unknown => (value === null ? undefined : value);

function holdsNull(value: unknown): boolean {
  if (value === null) return true;
  if (typeof value !== 'object') return false;
  for (const item of Array.isArray(value) ? value : Object.values(value)) if (holdsNull(item)) return true;
  return false;
}
