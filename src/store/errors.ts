// Errors the store raises, each saying what happened to the user's data and what to do next.

export interface StorageUsage {
  /** Bytes this origin uses. */
  usage: number;
  /** Bytes this origin may use. */
  quota: number;
}

/** 1536 → "1.5 KiB". */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${Math.round(v)} bytes` : `${v.toFixed(1)} ${units[u]}`;
}

/** True for the browsers' "out of quota" errors (a DOMException named QuotaExceededError, or Firefox's legacy name). */
export function isQuotaError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const name = (err as { name?: unknown }).name;
  return name === 'QuotaExceededError' || name === 'NS_ERROR_DOM_QUOTA_REACHED';
}

/** How every StorageFullError message starts, so a page that only sees the message (from a worker) can offer to prune. */
export const STORAGE_FULL_PREFIX = 'Storage is full:';

/** Whether an error message (maybe prefixed, e.g. "Could not load …: ") is a StorageFullError's. */
export function isStorageFullMessage(message: string | null | undefined): boolean {
  return typeof message === 'string' && message.includes(STORAGE_FULL_PREFIX);
}

/** A write did not fit in the origin's storage quota. The write was rolled back as a whole. */
export class StorageFullError extends Error {
  readonly usage: number | null;
  readonly quota: number | null;

  constructor(what: string, estimate: StorageUsage | null, options?: { cause?: unknown }) {
    const used = estimate
      ? `This site uses ${formatBytes(estimate.usage)} of its ${formatBytes(estimate.quota)} quota.`
      : 'The browser does not report how much this site uses.';
    super(
      `${STORAGE_FULL_PREFIX} ${what} failed and nothing of it was written. ${used} ` +
        'Free space by pruning old rollouts (keep only the last few steps), pruning old checkpoints, or deleting runs you no longer need, then try again.',
      options,
    );
    this.name = 'StorageFullError';
    this.usage = estimate?.usage ?? null;
    this.quota = estimate?.quota ?? null;
  }
}

/** Another tab, window or worker holds the run's lock (see withRunLock). */
export class RunLockedError extends Error {
  constructor(readonly runId: string) {
    super(`run "${runId}" is open in another tab or window, which holds its lock; stop or close it there, then try again`);
    this.name = 'RunLockedError';
  }
}

export class RunNotFoundError extends Error {
  constructor(readonly runId: string) {
    super(`no run with id "${runId}" (it may have been deleted)`);
    this.name = 'RunNotFoundError';
  }
}

/** The connection was closed: by close(), or because another tab upgrades the database. */
export class StoreClosedError extends Error {
  constructor(reason: string) {
    super(`the run store is closed (${reason}); reload the page to reopen it`);
    this.name = 'StoreClosedError';
  }
}
