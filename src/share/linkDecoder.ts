// Opens share links without freezing the page: decodeShareLink (inflate, UTF-8, JSON, key checks,
// the strict schemas) runs in a module worker (./linkDecode.worker.ts), so a link of megabytes
// costs the main thread nothing but applying the result. The newest link wins: a link opened while
// another is still being read stops that worker (its answer would be stale). A link whose reading
// runs past LINK_DECODE_TIMEOUT_MS is stopped the same way and refused with a clear message. Only
// where module workers cannot run at all (no Worker, or the worker cannot start) is the link read
// here on the main thread, as before. The refusals are decodeShareLink's own ShareLinkErrors.
import { decodeShareLink, linkFragment, ShareLinkError, type Shared } from './link';
import type { LinkDecodeReply, LinkDecodeRequest } from './linkReply';

/** The part of Worker this uses (a fake in unit tests). */
export interface WorkerLike {
  postMessage(message: unknown): void;
  terminate(): void;
  onmessage: ((event: MessageEvent) => void) | null;
  onerror: ((event: ErrorEvent) => void) | null;
}

/**
 * Longest a link may take to read in its worker before it is stopped. The largest valid link
 * (2 MB of JSON) reads in about 1–4 s on a busy 2-core machine with software rendering.
 */
export const LINK_DECODE_TIMEOUT_MS = 15_000;

/** The link worker; null where this browser cannot start module workers (the link is then read on the main thread). */
export function spawnLinkWorker(): WorkerLike | null {
  if (typeof Worker === 'undefined') return null;
  try {
    return new Worker(new URL('./linkDecode.worker.ts', import.meta.url), { type: 'module', name: 'share-link' });
  } catch {
    return null;
  }
}

export class LinkDecoder {
  private worker: WorkerLike | null = null;
  private seq = 0;
  /** The worker could not run: read links on the main thread from now on. */
  private inline = false;
  private inFlight: {
    id: number;
    fragment: string;
    resolve: (shared: Shared | null) => void;
    reject: (e: Error) => void;
    timer: ReturnType<typeof setTimeout>;
  } | null = null;
  /** The worker said it started (its module loaded): a failure after that is not a reason to read links here. */
  private ready = false;

  constructor(
    private readonly spawn: () => WorkerLike | null = spawnLinkWorker,
    private readonly timeoutMs = LINK_DECODE_TIMEOUT_MS,
  ) {}

  /**
   * Reads a share link (a fragment with or without "#", or a whole URL): the validated
   * experiment, or a ShareLinkError saying what is wrong; null when a newer link superseded it.
   */
  decode(fragment: string): Promise<Shared | null> {
    if (this.inFlight) {
      // Stale: stopping its worker is the only way to get the core back at once.
      this.stopWorker();
      this.settle(null);
    }
    // Text of over MAX_FRAGMENT_CHARS is refused here, at no cost, not copied to the worker.
    try {
      linkFragment(fragment);
    } catch (e) {
      return Promise.reject(e as Error);
    }
    const id = ++this.seq;
    const worker = this.inline ? null : this.ensureWorker();
    if (!worker) return this.decodeHere(fragment);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.inFlight?.id !== id) return;
        this.stopWorker();
        const seconds = this.timeoutMs / 1000;
        this.settle(new ShareLinkError('too_slow', `reading the link took over ${seconds} s and was stopped: it is damaged or far too large for a link (export a run file instead)`));
      }, this.timeoutMs);
      this.inFlight = { id, fragment, resolve, reject, timer };
      worker.postMessage({ id, fragment } satisfies LinkDecodeRequest);
    });
  }

  /** Stops the worker (the page is going); a link being read resolves null. */
  dispose(): void {
    this.stopWorker();
    this.settle(null);
  }

  private async decodeHere(fragment: string): Promise<Shared> {
    return decodeShareLink(fragment);
  }

  private ensureWorker(): WorkerLike | null {
    if (this.worker) return this.worker;
    const worker = this.spawn();
    if (!worker) {
      this.inline = true;
      return null;
    }
    worker.onmessage = (event: MessageEvent<LinkDecodeReply | { ready: true }>) => {
      const reply = event.data;
      if ('ready' in reply) {
        this.ready = true;
        return;
      }
      if (this.inFlight?.id !== reply.id) return; // an answer to a superseded link
      if (reply.ok) this.settle(reply.shared);
      else this.settle(reply.code === null ? new Error(reply.message) : new ShareLinkError(reply.code, reply.message));
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault?.();
      const started = this.ready;
      this.stopWorker();
      if (started) {
        // It ran, then died on this link (out of memory, say): refuse the link, never retry it here.
        this.settle(new ShareLinkError('too_large', `the link could not be read: its reader stopped (${event.message || 'unknown error'}); it is damaged or far too large for a link`));
        return;
      }
      // The worker could not start (module workers cannot run here): read links on the main thread.
      this.inline = true;
      const pending = this.inFlight;
      if (!pending) return;
      this.inFlight = null;
      clearTimeout(pending.timer);
      this.decodeHere(pending.fragment).then(pending.resolve, pending.reject);
    };
    this.worker = worker;
    return worker;
  }

  private stopWorker(): void {
    this.worker?.terminate();
    this.worker = null;
    this.ready = false;
  }

  /** Settles the link being read: its experiment, an error, or null (superseded). */
  private settle(outcome: Shared | Error | null): void {
    const pending = this.inFlight;
    if (!pending) return;
    this.inFlight = null;
    clearTimeout(pending.timer);
    if (outcome instanceof Error) pending.reject(outcome);
    else pending.resolve(outcome);
  }
}
