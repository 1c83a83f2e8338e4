// Download progress over several files: bytes per file and in all, network speed over a
// recent window, and ETAs. Pure (the clock is injected), so the arithmetic is unit-tested.

export interface FileProgress {
  /** The file this event is about. */
  file: string;
  /** Bytes of this file so far. */
  loaded: number;
  /** Its size when known (the server's Content-Length, or the cached size). */
  total: number | null;
  /** Read from the model cache rather than the network. */
  fromCache: boolean;
  done: boolean;
}

export interface DownloadProgress extends FileProgress {
  /** Network bytes per second over the last few seconds (cache reads do not count). */
  bytesPerSecond: number;
  /** Seconds left for this file at that speed; null when its size or the speed is unknown. */
  etaSeconds: number | null;
  /** All files known so far (shards become known once the index is read). */
  overall: {
    loaded: number;
    /** Null until every known file's size is known. */
    total: number | null;
    filesDone: number;
    filesKnown: number;
    etaSeconds: number | null;
  };
}

export type ProgressListener = (progress: DownloadProgress) => void;

/** Speed is measured over this window, so a stall shows up within seconds. */
export const SPEED_WINDOW_SECONDS = 3;
/** Intermediate events come at most this often per file (the first and last always come). */
export const EMIT_INTERVAL_SECONDS = 0.1;

interface Entry extends FileProgress {
  started: boolean;
}

export class ProgressTracker {
  private readonly files = new Map<string, Entry>();
  /** (time, cumulative network bytes) samples inside the speed window. */
  private samples: { t: number; bytes: number }[] = [];
  private networkBytes = 0;
  private lastEmit = new Map<string, number>();

  constructor(
    private readonly listener: ProgressListener | undefined,
    /** Seconds, monotonic. */
    private readonly now: () => number = () => performance.now() / 1000,
  ) {}

  /** Files that will be read, so the overall total and ETA cover them before they start. */
  expect(files: string[]): void {
    for (const file of files) {
      if (!this.files.has(file)) this.files.set(file, { file, loaded: 0, total: null, fromCache: false, done: false, started: false });
    }
  }

  begin(file: string, total: number | null, fromCache: boolean): void {
    this.files.set(file, { file, loaded: 0, total, fromCache, done: false, started: true });
    if (!fromCache && this.samples.length === 0) this.samples.push({ t: this.now(), bytes: this.networkBytes });
    this.emit(file, true);
  }

  advance(file: string, bytes: number): void {
    const entry = this.entry(file);
    entry.loaded += bytes;
    // A compressed response's Content-Length counts compressed bytes: the size is unknown then.
    if (entry.total !== null && entry.loaded > entry.total) entry.total = null;
    if (!entry.fromCache) {
      this.networkBytes += bytes;
      this.samples.push({ t: this.now(), bytes: this.networkBytes });
    }
    this.emit(file, false);
  }

  end(file: string): void {
    const entry = this.entry(file);
    entry.total = entry.loaded;
    entry.done = true;
    this.emit(file, true);
  }

  /** Network bytes per second over the last SPEED_WINDOW_SECONDS (0 before two samples). */
  bytesPerSecond(): number {
    const t = this.now();
    while (this.samples.length > 2 && this.samples[1].t <= t - SPEED_WINDOW_SECONDS) this.samples.shift();
    if (this.samples.length < 2) return 0;
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    const seconds = t - first.t;
    return seconds > 0 ? (last.bytes - first.bytes) / seconds : 0;
  }

  snapshot(file: string): DownloadProgress {
    const entry = this.entry(file);
    const speed = this.bytesPerSecond();
    const eta = (loaded: number, total: number | null): number | null =>
      total === null ? null : loaded >= total ? 0 : speed > 0 ? (total - loaded) / speed : null;
    let loaded = 0;
    let total: number | null = 0;
    let filesDone = 0;
    for (const e of this.files.values()) {
      loaded += e.loaded;
      total = total === null || e.total === null ? null : total + e.total;
      if (e.done) filesDone++;
    }
    const { started: _started, ...progress } = entry;
    return {
      ...progress,
      bytesPerSecond: speed,
      etaSeconds: entry.fromCache ? (entry.done ? 0 : null) : eta(entry.loaded, entry.total),
      overall: { loaded, total, filesDone, filesKnown: this.files.size, etaSeconds: eta(loaded, total) },
    };
  }

  private entry(file: string): Entry {
    const entry = this.files.get(file);
    if (!entry || !entry.started) throw new Error(`progress: ${file} was not begun`);
    return entry;
  }

  private emit(file: string, always: boolean): void {
    if (!this.listener) return;
    const t = this.now();
    const last = this.lastEmit.get(file);
    if (!always && last !== undefined && t - last < EMIT_INTERVAL_SECONDS) return;
    this.lastEmit.set(file, t);
    this.listener(this.snapshot(file));
  }
}
