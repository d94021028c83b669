import { z } from 'zod';

/* The browser console's sign-in (`/session`, TEAMS.md section 11). */

export const SessionRequest = z
  .object({ key: z.string().min(1).max(1024).meta({ description: 'An API key; the answer sets a session cookie instead of keeping it.' }) })
  .meta({ id: 'SessionRequest' });
export type SessionRequest = z.infer<typeof SessionRequest>;
