import type { StatsFs } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ToolSettings } from '../tool.js';
import { errnoCode } from '../tool-errors.js';

/** SANDBOX_MIN_FREE_MB, SANDBOX_MIN_FREE_PERCENT and SANDBOX_MIN_FREE_INODES, as ToolSettings holds them. */
export type FloorSettings = Pick<ToolSettings, 'sandboxMinFreeMb' | 'sandboxMinFreePercent' | 'sandboxMinFreeInodes'>;

/** A place whose file system is watched, and how a message names it (DATA_DIR's path is not the agent's to learn). */
export interface WatchedPlace {
  path: string;
  name: string;
}

const MIB = 1024 * 1024;

/** The settings that make the floor, as a refusal names them. */
export const FLOOR_SETTINGS = 'SANDBOX_MIN_FREE_MB, SANDBOX_MIN_FREE_PERCENT, SANDBOX_MIN_FREE_INODES';

/** What a refusal or a stop at the floor tells the agent: the settings, and how to get room again. */
export const floorAdvice = (reason: string): string =>
  `${reason} (${FLOOR_SETTINGS}); delete what is not needed (\`bash\` runs only rm until there is room again), or ask the operator to free space`;

export const floorEnabled = (floor: FloorSettings): boolean => floor.sandboxMinFreeMb > 0 || floor.sandboxMinFreePercent > 0 || floor.sandboxMinFreeInodes > 0;

/**
 * The file system's figures for `path`, or for its nearest existing ancestor: a path the command
 * or the service has yet to make lands on the file system that holds its parent.
 */
async function statfsNearest(path: string): Promise<StatsFs> {
  let current = path;
  for (;;) {
    try {
      return await statfs(current);
    } catch (error) {
      const code = errnoCode(error);
      const parent = dirname(current);
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || parent === current) throw error;
      current = parent;
    }
  }
}

const mib = (bytes: number): string => `${Math.floor(bytes / MIB)} MiB`;

/**
 * Why writing must stop at `place`, or undefined while its file system keeps the floor: free space
 * (what an unprivileged writer may still use) of at least the larger of SANDBOX_MIN_FREE_MB and
 * SANDBOX_MIN_FREE_PERCENT of its size, free inodes of at least the larger of
 * SANDBOX_MIN_FREE_INODES and that percentage of its inodes. A file system that reports no inode
 * count (btrfs) has only its space watched. One that cannot be asked fails closed.
 */
async function breachAt(place: WatchedPlace, floor: FloorSettings): Promise<string | undefined> {
  let stats: StatsFs;
  try {
    stats = await statfsNearest(place.path);
  } catch (error) {
    return `the free space of ${place.name} cannot be read (${errnoCode(error) ?? 'error'})`;
  }
  const share = floor.sandboxMinFreePercent / 100;
  const freeBytes = stats.bavail * stats.bsize;
  const floorBytes = Math.max(floor.sandboxMinFreeMb * MIB, share * stats.blocks * stats.bsize);
  if (floorBytes > 0 && freeBytes < floorBytes) return `the file system of ${place.name} has ${mib(freeBytes)} free, below the floor of ${mib(floorBytes)}`;
  if (stats.files === 0) return undefined;
  const floorInodes = Math.max(floor.sandboxMinFreeInodes, Math.ceil(share * stats.files));
  if (floorInodes > 0 && stats.ffree < floorInodes) return `the file system of ${place.name} has ${stats.ffree} free inodes (files), below the floor of ${floorInodes}`;
  return undefined;
}

/** The first place whose file system is below the floor, said in words; undefined when all keep it (or the floor is off). */
export async function floorBreach(places: readonly WatchedPlace[], floor: FloorSettings): Promise<string | undefined> {
  if (!floorEnabled(floor)) return undefined;
  const reasons = await Promise.all(places.map((place) => breachAt(place, floor)));
  return reasons.find((reason) => reason !== undefined);
}

/**
 * DATA_DIR (the database, stored runs, checkpoints) and a SQLite database kept elsewhere: every
 * user's runs fail when their file system is full, whoever filled it.
 */
export function servicePlaces(settings: Pick<ToolSettings, 'dataDir' | 'database'>): WatchedPlace[] {
  const name = "the service's data";
  const database = settings.database?.dialect === 'sqlite' && settings.database.path !== ':memory:' ? [{ path: dirname(settings.database.path), name }] : [];
  return [{ path: settings.dataDir, name }, ...database];
}

const POLL_MS = 250;

/**
 * Asks the file systems of `places` a few times a second (one statfs each: the cost does not grow
 * with what is written) and calls `onBreach` once, with the reason, when one falls below the floor.
 * The first poll is a period away: the caller asked floorBreach just before it started the work.
 * A poll never overlaps the last (a slow network file system). Returns the stop.
 */
export function watchFloor(places: readonly WatchedPlace[], floor: FloorSettings, onBreach: (reason: string) => void): () => void {
  let stopped = !floorEnabled(floor);
  let timer: NodeJS.Timeout | undefined;
  const poll = async (): Promise<void> => {
    const reason = await floorBreach(places, floor);
    if (stopped) return;
    if (reason !== undefined) {
      stopped = true;
      onBreach(reason);
      return;
    }
    timer = setTimeout(() => void poll(), POLL_MS);
  };
  if (!stopped) timer = setTimeout(() => void poll(), POLL_MS);
  return () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
  };
}
