// The adapter's calibration for the model being edited (see src/rl/calibration.ts), asked of the
// trainer worker once per model (the worker keeps it for the page): the step-time estimate is
// then pure arithmetic on every settings edit (src/rl/stepTime.ts). Never while a run trains
// (the worker refuses: both would be slower), newest request wins.
import type { CalibrationReply, CalibrationRequest } from '../../worker/trainerClient';

export type Calibrator = (request: CalibrationRequest) => Promise<CalibrationReply>;

export class StepTimeCheck {
  state = $state<'idle' | 'measuring' | 'ready' | 'failed'>('idle');
  reply = $state.raw<CalibrationReply | null>(null);
  error = $state<string | null>(null);
  private key: string | null = null;
  private ticket = 0;

  constructor(private readonly calibrator: Calibrator) {}

  /** Measures for `request` unless `key` (model, mirror, picked files) was measured already; null: nothing to measure. */
  request(request: CalibrationRequest | null, key: string): void {
    if (request === null) {
      this.ticket++;
      this.key = null;
      if (this.state === 'measuring') this.state = this.reply ? 'ready' : 'idle';
      return;
    }
    if (this.key === key && this.state !== 'failed') return;
    this.key = key;
    const ticket = ++this.ticket;
    this.state = 'measuring';
    this.calibrator(request).then(
      (reply) => {
        if (ticket !== this.ticket) return;
        this.reply = reply;
        this.error = null;
        this.state = 'ready';
      },
      (e: unknown) => {
        if (ticket !== this.ticket) return;
        this.error = (e as Error).message;
        this.state = 'failed';
        // A refusal (a run was training) is asked again next time.
        this.key = null;
      },
    );
  }
}
