// The GPU-memory estimate of the experiment being edited, asked of the trainer worker a moment
// after the model or a setting stops changing (typing a number does not start one estimate per
// key), newest request wins. When the estimate says the run does not fit, Train is disabled
// with the estimate's own message; so it is when the estimate refuses the experiment with a
// RangeError (prompts plus max_completion_length beyond the model's context: open() would
// refuse it the same way). An estimate that could not be made (config.json unreachable, no
// GPU) blocks nothing: open() checks again and says why.
import type { MemoryPlan } from '../../rl/memoryPlan';

export interface EstimateRequest {
  experiment: Record<string, unknown>;
  localFiles?: File[];
  hubEndpoint?: string;
}

export type EstimateReply = MemoryPlan;

export type Estimator = (request: EstimateRequest) => Promise<EstimateReply>;

export const ESTIMATE_DELAY_MS = 400;

export class MemoryCheck {
  /** 'waiting': a newer estimate is on its way (the reply shown may be for an older experiment). */
  state = $state<'idle' | 'waiting' | 'ready' | 'failed'>('idle');
  reply = $state.raw<EstimateReply | null>(null);
  error = $state<string | null>(null);
  /** The failure is about the experiment itself (it cannot run on this model), not the estimate. */
  errorBlocks = $state(false);
  /** The key of the experiment `reply` (or `error`) is about. */
  private answered = $state<string | null>(null);
  private timer: ReturnType<typeof setTimeout> | null = null;
  private latest = 0;

  constructor(
    private readonly estimator: Estimator,
    private readonly delayMs = ESTIMATE_DELAY_MS,
  ) {}

  /**
   * Estimates `request` after the delay unless another schedule comes first. `key` identifies
   * what is estimated (experiment, endpoint, picked files); null request: nothing to estimate.
   */
  schedule(request: EstimateRequest | null, key: string): void {
    // The experiment on show is already estimated (and nothing newer is on its way).
    if (request !== null && this.answered === key && this.state !== 'waiting') return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const ticket = ++this.latest;
    if (request === null) {
      this.state = 'idle';
      this.reply = null;
      this.error = null;
      this.errorBlocks = false;
      this.answered = null;
      return;
    }
    this.state = 'waiting';
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.run(request, key, ticket);
    }, this.delayMs);
  }

  /** The estimate's message when the experiment `key` does not fit this GPU; null otherwise. */
  blocker(key: string): string | null {
    if (this.answered !== key) return null;
    if (this.state === 'failed') return this.errorBlocks ? this.error : null;
    if (this.state !== 'ready' || !this.reply || this.reply.fit.fits) return null;
    return this.reply.fit.message ?? 'The estimate says this run does not fit in GPU memory.';
  }

  /** Whether the reply shown is about the experiment `key`. */
  isCurrent(key: string): boolean {
    return this.answered === key && this.state !== 'waiting';
  }

  dispose(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.latest++;
  }

  private async run(request: EstimateRequest, key: string, ticket: number): Promise<void> {
    try {
      const reply = await this.estimator(request);
      if (ticket !== this.latest) return;
      this.reply = reply;
      this.error = null;
      this.errorBlocks = false;
      this.state = 'ready';
    } catch (e) {
      if (ticket !== this.latest) return;
      this.reply = null;
      this.error = (e as Error).message;
      // Comlink carries a thrown error's name across postMessage.
      this.errorBlocks = (e as Error).name === 'RangeError';
      this.state = 'failed';
    }
    this.answered = key;
  }
}
