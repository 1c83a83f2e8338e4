// The page's side of the "Try it" worker: the newest request wins. A request sent while another
// is still being scored terminates that worker (its answer would be stale) and starts a fresh one;
// a request that runs past the time budget is stopped the same way and reported, so a slow rubric
// can never freeze the page or keep a core busy for nothing. The budget starts when the worker
// has said it is ready: a cold worker's load time (seconds on a busy machine) is not scoring time.
import type { GrpoConfig } from '../../rl/config';
import type { Rubric } from '../../rubric';
import type { RubricDraft } from './rubricDraft';
import type { TryItResult } from './tryIt';

export interface TryItRequest {
  draft: RubricDraft;
  rubric: Rubric | null;
  config: GrpoConfig | null;
  prompt: string;
  response: string;
  answers: Record<number, string>;
}

export type TryItReply = { seq: number; ok: true; result: TryItResult } | { seq: number; ok: false; error: string };

export type TryItOutcome = { ok: true; result: TryItResult } | { ok: false; message: string };

/** The part of Worker this uses (a fake in unit tests). */
export interface WorkerLike {
  postMessage(message: unknown): void;
  terminate(): void;
  onmessage: ((event: MessageEvent) => void) | null;
  onerror: ((event: ErrorEvent) => void) | null;
}

/** Longest a response may take to score before the worker is stopped. */
export const TRY_IT_BUDGET_MS = 3000;
/**
 * Longest a fresh worker may take to load. Its start-up is not the rubric's fault and is not
 * charged to the scoring budget: on a slow machine a module worker can take seconds to load.
 */
export const TRY_IT_STARTUP_MS = 60_000;

/** What the worker posts: once `ready` when its module has loaded, then one reply a request. */
export type TryItWorkerMessage = { ready: true } | TryItReply;

export const spawnTryItWorker = (): WorkerLike => new Worker(new URL('./tryIt.worker.ts', import.meta.url), { type: 'module', name: 'try-it' });

interface Pending {
  seq: number;
  request: TryItRequest;
  settle: (o: TryItOutcome | null) => void;
  /** The scoring budget's timer, set once the request is posted to a ready worker. */
  timer: ReturnType<typeof setTimeout> | null;
}

export class TryItScorer {
  private worker: WorkerLike | null = null;
  private ready = false;
  private startupTimer: ReturnType<typeof setTimeout> | null = null;
  private seq = 0;
  private current: Pending | null = null;

  constructor(
    private readonly spawn: () => WorkerLike = spawnTryItWorker,
    private readonly budgetMs = TRY_IT_BUDGET_MS,
    private readonly startupMs = TRY_IT_STARTUP_MS,
  ) {}

  /** Scores one request; resolves null when a newer request superseded it. */
  score(request: TryItRequest): Promise<TryItOutcome | null> {
    if (this.current) {
      // Posted: its worker may be deep in a regex, and stopping it is the only way to get the
      // core back. Not posted yet: the worker is still loading; keep it, drop the old request.
      if (this.current.timer !== null) this.stopWorker();
      this.finish(null);
    }
    const seq = ++this.seq;
    this.ensureWorker();
    return new Promise((settle) => {
      this.current = { seq, request, settle, timer: null };
      if (this.ready) this.post(this.current);
    });
  }

  /** Stops the worker (the component is gone); a pending request resolves null. */
  dispose(): void {
    this.stopWorker();
    this.finish(null);
  }

  private post(pending: Pending): void {
    pending.timer = setTimeout(() => {
      if (this.current !== pending) return;
      this.stopWorker();
      const seconds = this.budgetMs / 1000;
      this.finish({
        ok: false,
        message: `Scoring this response took over ${seconds} s and was stopped. The rubric's rules are too slow on this much text: shorten the response, lower the regex rules' max_input_chars, or simplify their patterns.`,
      });
    }, this.budgetMs);
    this.worker?.postMessage({ seq: pending.seq, request: pending.request });
  }

  private ensureWorker(): void {
    if (this.worker) return;
    const worker = this.spawn();
    this.ready = false;
    this.startupTimer = setTimeout(() => {
      this.stopWorker();
      this.finish({
        ok: false,
        message: `Could not score this response: the scoring worker did not start in ${this.startupMs / 1000} s (the page may be short of CPU or memory). Edit the response to try again.`,
      });
    }, this.startupMs);
    worker.onmessage = (event: MessageEvent<TryItWorkerMessage>) => {
      if (this.worker !== worker) return; // a stopped worker's late message
      const message = event.data;
      if ('ready' in message) {
        this.ready = true;
        this.clearStartupTimer();
        if (this.current && this.current.timer === null) this.post(this.current);
        return;
      }
      if (this.current?.seq !== message.seq) return; // an answer to a superseded request
      this.finish(message.ok ? { ok: true, result: message.result } : { ok: false, message: `Could not score this response: ${message.error}` });
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault?.();
      if (this.worker !== worker) return;
      this.stopWorker();
      this.finish({ ok: false, message: `Could not score this response: the scoring worker failed (${event.message || 'unknown error'}).` });
    };
    this.worker = worker;
  }

  private clearStartupTimer(): void {
    if (this.startupTimer !== null) clearTimeout(this.startupTimer);
    this.startupTimer = null;
  }

  private stopWorker(): void {
    this.clearStartupTimer();
    this.worker?.terminate();
    this.worker = null;
    this.ready = false;
  }

  private finish(outcome: TryItOutcome | null): void {
    const pending = this.current;
    if (!pending) return;
    this.current = null;
    if (pending.timer !== null) clearTimeout(pending.timer);
    pending.settle(outcome);
  }
}
