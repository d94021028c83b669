export const DAY_MS = 86_400_000;

/** The start of the UTC day `now` is in: where a user's daily runs and tokens start counting (TEAMS.md section 9). */
export const startOfUtcDay = (now: Date): Date => new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);
