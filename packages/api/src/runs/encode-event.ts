/** A frame as it goes on the wire and into the store: JSON with null fields left out. */
export function encodeEvent(frame: object): string {
  return JSON.stringify(frame, (_key, value: unknown) => (value === null ? undefined : value));
}
