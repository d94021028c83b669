/**
 * The `limit` newest of many files, and how many there were. glob_files shows at most `limit`
 * paths of a listing that may hold tens of thousands: keeping only the newest `limit` in a heap
 * costs one comparison for most files, where sorting them all cost a comparator call per pair
 * visited. Ties in time are broken by path, so the answer never depends on the order files come in.
 */
export class NewestFirst {
  /** A min-heap by `comesBefore` reversed: the root is the entry that would be shown last. */
  private readonly paths: string[] = [];
  private readonly times: number[] = [];
  private count = 0;

  constructor(private readonly limit: number) {}

  /** How many files were added. */
  get total(): number {
    return this.count;
  }

  add(path: string, mtime: number): void {
    this.count++;
    if (this.paths.length < this.limit) {
      this.paths.push(path);
      this.times.push(mtime);
      this.siftUp(this.paths.length - 1);
      return;
    }
    if (this.limit === 0 || !comesBefore(mtime, path, this.times[0] as number, this.paths[0] as string)) return;
    this.paths[0] = path;
    this.times[0] = mtime;
    this.siftDown(0);
  }

  /** The kept paths, newest first. */
  newest(): string[] {
    const order = this.paths.map((_, index) => index);
    order.sort((a, b) => (comesBefore(this.times[a] as number, this.paths[a] as string, this.times[b] as number, this.paths[b] as string) ? -1 : 1));
    return order.map((index) => this.paths[index] as string);
  }

  /** Whether entry `i` is shown after entry `j`, so belongs nearer the root. */
  private later(i: number, j: number): boolean {
    return comesBefore(this.times[j] as number, this.paths[j] as string, this.times[i] as number, this.paths[i] as string);
  }

  private swap(i: number, j: number): void {
    [this.paths[i], this.paths[j]] = [this.paths[j] as string, this.paths[i] as string];
    [this.times[i], this.times[j]] = [this.times[j] as number, this.times[i] as number];
  }

  private siftUp(index: number): void {
    for (let i = index; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!this.later(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(index: number): void {
    const size = this.paths.length;
    for (let i = index; ; ) {
      const left = 2 * i + 1;
      let latest = i;
      if (left < size && this.later(left, latest)) latest = left;
      if (left + 1 < size && this.later(left + 1, latest)) latest = left + 1;
      if (latest === i) return;
      this.swap(i, latest);
      i = latest;
    }
  }
}

/** Newer first; the same time by path. Two entries are never equal: a listing names a file once. */
const comesBefore = (mtimeA: number, pathA: string, mtimeB: number, pathB: string): boolean => mtimeA > mtimeB || (mtimeA === mtimeB && pathA < pathB);
