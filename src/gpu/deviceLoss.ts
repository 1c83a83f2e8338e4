// Device loss as the rest of the code sees it. A lost device settles nothing it was asked for:
// in Chromium a pending mapAsync, popErrorScope or onSubmittedWorkDone on a destroyed device can
// stay pending for good, so a step awaiting one would hang. Every await on the GPU is therefore
// raced against the loss, and fails at once with GpuDeviceLostError.

/** The device this work ran on is gone (destroyed, driver reset, GPU removed or out of memory). */
export class GpuDeviceLostError extends Error {
  constructor(
    /** GPUDeviceLostInfo.reason: 'destroyed' or 'unknown'. */
    readonly reason: string,
    /** The browser's own words, if any. */
    readonly detail: string,
  ) {
    super(`the GPU device was lost (${describeLoss(reason, detail)}); reload to get a new one`);
    this.name = 'GpuDeviceLostError';
  }
}

/** "destroyed: Device was destroyed." — the reason and the browser's message, as one phrase. */
export function describeLoss(reason: string, detail: string): string {
  const d = detail.trim();
  return d ? `${reason}: ${d}` : reason;
}

/**
 * Follows one device's `lost` promise. race() holds a callback only while its promise is
 * pending (a Set, not a `.then` on the lost promise per call), so the millions of awaits of a
 * long run leave nothing behind on a device that is never lost.
 */
export class DeviceLossWatch {
  private error: GpuDeviceLostError | null = null;
  private readonly waiting = new Set<(err: GpuDeviceLostError) => void>();

  constructor(lost: Promise<GPUDeviceLostInfo>) {
    void lost.then((info) => {
      this.error = new GpuDeviceLostError(info.reason ?? 'unknown', info.message ?? '');
      for (const fail of this.waiting) fail(this.error);
      this.waiting.clear();
    });
  }

  /** Null while the device works; the loss once it is gone. */
  get lost(): GpuDeviceLostError | null {
    return this.error;
  }

  /** Settles as `promise` does, or rejects with GpuDeviceLostError as soon as the device is lost. */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.error) {
      promise.catch(() => {}); // it may still reject later; nobody is waiting for it now
      return Promise.reject(this.error);
    }
    return new Promise<T>((resolve, reject) => {
      const fail = (err: GpuDeviceLostError) => reject(err);
      this.waiting.add(fail);
      promise.then(
        (value) => {
          this.waiting.delete(fail);
          resolve(value);
        },
        (err: unknown) => {
          this.waiting.delete(fail);
          // A map aborted by destroy() may reject before `lost` resolves: such a rejection is the
          // loss, so wait a moment for it. On a working device these promises never reject.
          void this.lostWithin(LOSS_GRACE_MS).then((lost) => reject(lost ?? err));
        },
      );
    });
  }

  /** The loss if it is reported within `ms`, else null. */
  private lostWithin(ms: number): Promise<GpuDeviceLostError | null> {
    if (this.error) return Promise.resolve(this.error);
    return new Promise((resolve) => {
      const done = (lost: GpuDeviceLostError | null) => {
        clearTimeout(timer);
        this.waiting.delete(done);
        resolve(lost);
      };
      const timer = setTimeout(() => done(null), ms);
      this.waiting.add(done);
    });
  }
}

/** How long a failed GPU await waits for the device's loss to be reported before failing as itself. */
const LOSS_GRACE_MS = 1000;
