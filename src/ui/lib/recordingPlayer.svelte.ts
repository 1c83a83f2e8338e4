// The open lesson's recorded run: found in the recordings index when the lesson opens (none: no
// replay offered, no message), read like an imported run file, and replayed step by step into the
// session's run view (the same charts, inspector and heatmaps a live run fills: session.show()
// with one more step per tick). While the lesson is open and the recording is not on screen,
// its reward curve is the expected shape overlaid on a live run's reward chart.
import { fetchRecording, fetchRecordingIndex, recordedWithLessonSettings, recordingFor, recordingLabel, type RecordingEntry } from '../../share/recordings';
import type { RunFile } from '../../share/runFile';
import { firstSteps, Replayer, replaySteps, speedById, type ReplayStep } from './replay';
import type { Overlay } from './series';
import type { TrainingSession } from './session.svelte';

type Fetch = Parameters<typeof fetchRecordingIndex>[1];

export class RecordingPlayer {
  /** The open lesson's recording as the index lists it (null: it has none). */
  entry = $state.raw<RecordingEntry | null>(null);
  /** The recording, once read. */
  run = $state.raw<RunFile | null>(null);
  /** Why the listed recording could not be read. */
  error = $state<string | null>(null);
  /** The lesson's settings changed since it was recorded. */
  stale = $state(false);
  /** Steps the replay shows now. */
  shown = $state(0);
  playing = $state(false);
  speedId = $state('4');

  private index: Promise<RecordingEntry[]> | null = null;
  private steps: ReplayStep[] = [];
  private replayer: Replayer | null = null;
  private lessonId: string | null = null;

  constructor(
    private readonly session: TrainingSession,
    private readonly base: () => string = () => document.baseURI,
    private readonly fetcher?: Fetch,
  ) {}

  /** The name the session shows the recording under (how the page tells it is on screen). */
  get viewName(): string | null {
    return this.run && this.entry ? `Recording of "${this.run.name.replace(/ \(recording, seed \d+\)$/, '')}" (seed ${this.entry.seed})` : null;
  }

  /** Whether the session shows this recording now (not a live run, a saved or imported one). */
  get onScreen(): boolean {
    const viewing = this.session.viewing;
    return viewing !== null && viewing.runId === null && this.viewName !== null && viewing.name === this.viewName;
  }

  /** The recording's reward curve for a live run's reward chart; none while the recording itself is shown. */
  get overlay(): Overlay | null {
    return this.run && this.entry && !this.onScreen ? { label: recordingLabel(this.entry.seed), metrics: this.run.metrics } : null;
  }

  /** Follows the open lesson (null: none open): finds and reads its recording. */
  async select(lesson: { id: string; experiment: unknown } | null): Promise<void> {
    if ((lesson?.id ?? null) === this.lessonId) return;
    this.lessonId = lesson?.id ?? null;
    this.halt();
    this.entry = null;
    this.run = null;
    this.error = null;
    this.stale = false;
    this.shown = 0;
    this.steps = [];
    if (!lesson) return;
    this.index ??= fetchRecordingIndex(this.base(), this.fetcher);
    const entry = recordingFor(await this.index, lesson.id);
    if (this.lessonId !== lesson.id || !entry) return;
    this.entry = entry;
    try {
      const run = await fetchRecording(this.base(), entry, this.fetcher);
      if (this.lessonId !== lesson.id) return;
      this.run = run;
      this.steps = replaySteps(run);
      this.stale = !recordedWithLessonSettings(run.experiment, lesson.experiment);
    } catch (e) {
      if (this.lessonId === lesson.id) this.error = (e as Error).message;
    }
  }

  /** "Watch the recording": shows it from its first step at the chosen speed (a live run pauses first). */
  async watch(): Promise<void> {
    if (!this.run || this.steps.length === 0) return;
    if (this.session.status === 'running') await this.session.pause();
    this.halt();
    this.shown = 0;
    this.replayer = new Replayer(
      this.steps.length,
      (count) => this.showSteps(count),
      () => (this.playing = false),
    );
    this.playing = true;
    this.replayer.play(speedById(this.speedId));
  }

  /** Pauses or goes on with a replay on screen. */
  toggle(): void {
    if (!this.replayer || !this.onScreen) return void this.watch();
    if (this.replayer.playing) {
      this.replayer.pause();
      this.playing = false;
    } else {
      this.playing = true;
      this.replayer.play(speedById(this.speedId));
    }
  }

  setSpeed(id: string): void {
    this.speedId = speedById(id).id;
    this.replayer?.setSpeed(speedById(id));
  }

  /** Stops the replay's clock (the steps shown stay until something else is shown). */
  halt(): void {
    this.replayer?.pause();
    this.replayer = null;
    this.playing = false;
  }

  private showSteps(count: number): void {
    // Something else took the run view (Train, a saved run): the replay stops there.
    if (this.shown > 0 && !this.onScreen) return this.halt();
    this.shown = count;
    const { metrics, rollouts } = firstSteps(this.steps, count);
    void this.session.show({ runId: null, name: this.viewName!, experiment: this.run!.experiment as unknown as Record<string, unknown>, metrics, rollouts });
  }
}
