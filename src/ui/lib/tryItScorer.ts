// The page's side of the "Try it" worker: the newest request wins. A request sent while another
// is still being scored terminates that worker (its answer would be stale) and starts a fresh one;
// a request that runs past the time budget is stopped the same way and reported, so a slow rubric
// can never freeze the page or keep a core busy for nothing.
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

export const spawnTryItWorker = (): WorkerLike => new Worker(new URL('./tryIt.worker.ts', import.meta.url), { type: 'module', name: 'try-it' });

export class TryItScorer {
  private worker: WorkerLike | null = null;
  private seq = 0;
  private inFlight: { seq: number; settle: (o: TryItOutcome | null) => void; timer: ReturnType<typeof setTimeout> } | null = null;

  constructor(
    private readonly spawn: () => WorkerLike = spawnTryItWorker,
    private readonly budgetMs = TRY_IT_BUDGET_MS,
  ) {}

  /** Scores one request; resolves null when a newer request superseded it. */
  score(request: TryItRequest): Promise<TryItOutcome | null> {
    if (this.inFlight) {
      // Stale: its worker may be deep in a regex; stopping it is the only way to get the core back.
      this.stopWorker();
      this.finish(null);
    }
    const seq = ++this.seq;
    const worker = this.ensureWorker();
    return new Promise((settle) => {
      const timer = setTimeout(() => {
        if (this.inFlight?.seq !== seq) return;
        this.stopWorker();
        const seconds = this.budgetMs / 1000;
        this.finish({
          ok: false,
          message: `Scoring this response took over ${seconds} s and was stopped. The rubric's rules are too slow on this much text: shorten the response, lower the regex rules' max_input_chars, or simplify their patterns.`,
        });
      }, this.budgetMs);
      this.inFlight = { seq, settle, timer };
      worker.postMessage({ seq, request });
    });
  }

  /** Stops the worker (the component is gone); a pending request resolves null. */
  dispose(): void {
    this.stopWorker();
    this.finish(null);
  }

  private ensureWorker(): WorkerLike {
    if (this.worker) return this.worker;
    const worker = this.spawn();
    worker.onmessage = (event: MessageEvent<TryItReply>) => {
      const reply = event.data;
      if (this.inFlight?.seq !== reply.seq) return; // an answer to a superseded request
      this.finish(reply.ok ? { ok: true, result: reply.result } : { ok: false, message: `Could not score this response: ${reply.error}` });
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault?.();
      this.stopWorker();
      this.finish({ ok: false, message: `Could not score this response: the scoring worker failed (${event.message || 'unknown error'}).` });
    };
    this.worker = worker;
    return worker;
  }

  private stopWorker(): void {
    this.worker?.terminate();
    this.worker = null;
  }

  private finish(outcome: TryItOutcome | null): void {
    const pending = this.inFlight;
    if (!pending) return;
    this.inFlight = null;
    clearTimeout(pending.timer);
    pending.settle(outcome);
  }
}
