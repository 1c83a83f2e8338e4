// Saves a run's status changes in order, and does not give up on one quietly. A failed write (a
// full disk refuses even a few hundred bytes; a connection closed for another tab's upgrade) is
// retried after a moment and again at flush(), which the trainer worker awaits before it lets go
// of the run's lock: while the lock is held the page knows the run's live status anyway, and
// once it is free a run still stored as 'running' reads as interrupted (./liveness.ts).
import { isStorageFullMessage } from './errors';
import type { RunStatus } from './schema';

/**
 * The status a run is stored with. A run that ended because storage is full did not fail:
 * every committed step is whole and it resumes once space is freed, so it is stored as stopped,
 * with the reason (a reload shows "stopped" and why; and where even that write cannot fit, the
 * status stays 'running', which reads as interrupted once the lock is free).
 */
export function storedStatus(status: RunStatus, message?: string): RunStatus {
  return status === 'failed' && isStorageFullMessage(message) ? 'stopped' : status;
}

export interface StatusTarget {
  setStatus(id: string, status: RunStatus, error?: string): Promise<unknown>;
}

interface Pending {
  runId: string;
  status: RunStatus;
  message?: string;
}

export class StatusWriter {
  private chain: Promise<void> = Promise.resolve();
  /** The newest status whose every write failed so far, per run. */
  private readonly unsaved = new Map<string, Pending>();
  /** Why the last write failed (for the worker's report), or null. */
  lastError: string | null = null;

  constructor(
    private readonly target: StatusTarget,
    /** Wait before the one immediate retry. */
    private readonly retryMs = 1000,
  ) {}

  /** Queues the write of `status` (with its reason for 'failed', or a full storage's); writes land in call order. */
  save(runId: string, status: RunStatus, message?: string): void {
    const p: Pending = { runId, status: storedStatus(status, message), ...(message !== undefined ? { message } : {}) };
    this.chain = this.chain.then(async () => {
      if ((await this.write(p)) || (await this.write(p, this.retryMs))) this.unsaved.delete(runId);
      else this.unsaved.set(runId, p);
    });
  }

  /** Waits for the queued writes, then tries each unsaved status once more; true when all are saved. */
  async flush(): Promise<boolean> {
    await this.chain;
    for (const [runId, p] of [...this.unsaved]) {
      if (await this.write(p)) this.unsaved.delete(runId);
    }
    return this.unsaved.size === 0;
  }

  private async write(p: Pending, afterMs = 0): Promise<boolean> {
    if (afterMs > 0) await new Promise((r) => setTimeout(r, afterMs));
    try {
      await this.target.setStatus(p.runId, p.status, p.message);
      this.lastError = null;
      return true;
    } catch (err) {
      this.lastError = (err as Error).message;
      return false;
    }
  }
}
