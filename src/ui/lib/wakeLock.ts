// Keeps the screen awake while training (navigator.wakeLock, where the browser has it). The
// browser drops the lock when the page is hidden; it is taken again when the page is visible.

interface Sentinel {
  released: boolean;
  release(): Promise<void>;
}
interface WakeLockLike {
  request(type: 'screen'): Promise<Sentinel>;
}

export class ScreenWakeLock {
  private sentinel: Sentinel | null = null;
  private wanted = false;
  /** Why the last request failed (permissions, battery saver), for the UI. */
  lastError: string | null = null;

  constructor(private readonly api: WakeLockLike | undefined = (navigator as Navigator & { wakeLock?: WakeLockLike }).wakeLock) {
    document.addEventListener('visibilitychange', this.onVisible);
  }

  get supported(): boolean {
    return this.api !== undefined;
  }

  get held(): boolean {
    return this.sentinel !== null && !this.sentinel.released;
  }

  async set(on: boolean): Promise<void> {
    this.wanted = on;
    if (on) await this.acquire();
    else await this.drop();
  }

  dispose(): void {
    document.removeEventListener('visibilitychange', this.onVisible);
    void this.drop();
  }

  private async acquire(): Promise<void> {
    if (!this.api || this.held || document.visibilityState !== 'visible') return;
    try {
      this.sentinel = await this.api.request('screen');
      this.lastError = null;
      if (!this.wanted) await this.drop();
    } catch (e) {
      this.lastError = (e as Error).message;
    }
  }

  private async drop(): Promise<void> {
    const s = this.sentinel;
    this.sentinel = null;
    if (s && !s.released) await s.release().catch(() => {});
  }

  private readonly onVisible = (): void => {
    if (this.wanted && document.visibilityState === 'visible') void this.acquire();
  };
}
