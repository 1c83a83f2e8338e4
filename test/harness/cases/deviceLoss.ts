// Page side of test/browser/deviceLoss.test.ts: the trainer worker's GPU device is destroyed in
// the middle of a step (the worker's test hook loseDeviceForTest), then the same worker resumes
// the run, which needs a new device.
import { RunStore } from '../../../src/store';
import { startTrainerWorker, type UiEvent } from '../../../src/worker/trainerClient';

/** A two-step run of the tiny fixture, checkpointed every step (also used by outOfMemory.ts). */
export const EXPERIMENT = {
  model: '/test/fixtures/tiny-byte-gpt2/',
  prompts: ['Name a color.', 'Say hello.'],
  rubric: { name: 'ascii', criteria: [{ id: 'ascii_start', text: 'Starts with a printable ASCII character', weight: 1, tier: 'important', rule: { kind: 'regex', pattern: '^[ -~]' } }] },
  config: { num_generations: 2, generation_batch_size: 2, max_completion_length: 2, max_steps: 2, save_steps: 1 },
};

/** The first event (already seen or still to come) that passes `test`, or null after `timeoutMs`. */
export function waitFor(events: UiEvent[], test: (e: UiEvent) => boolean, timeoutMs: number): Promise<UiEvent | null> {
  const end = performance.now() + timeoutMs;
  return new Promise((resolve) => {
    const poll = () => {
      const hit = events.find(test);
      if (hit) resolve(hit);
      else if (performance.now() > end) resolve(null);
      else setTimeout(poll, 20);
    };
    poll();
  });
}

async function storedRun(database: string, runId: string) {
  const store = await RunStore.open({ name: database });
  try {
    const run = await store.getRun(runId);
    return { status: run?.status, error: run?.error ?? null, steps: (await store.metrics(runId)).map((m) => m.step), rollouts: (await store.rollouts(runId)).length };
  } finally {
    store.close();
  }
}

/**
 * Trains step 0 (committed with a checkpoint), destroys the device once step 1 has sampled, and
 * reports how long the run took to stop and what it said; then resumes on a new device.
 */
export async function loseMidStep(_runtime: unknown, input: { stopWithinMs: number }) {
  const database = `device-loss-test-${Date.now()}`;
  const worker = startTrainerWorker();
  try {
    const events: UiEvent[] = [];
    await worker.onEvent((e) => events.push(e));
    const opened = await worker.api.open({ experiment: EXPERIMENT, name: 'device loss test', database });
    await worker.api.start();
    if (!(await waitFor(events, (e) => e.type === 'stage' && e.step === 1 && e.stage === 'sampled', 240_000))) throw new Error('step 1 never sampled');
    const lostAt = performance.now();
    const destroyed = await worker.api.loseDeviceForTest();
    const ended = (await waitFor(events, (e) => e.type === 'status' && e.status !== 'running', input.stopWithinMs)) as Extract<UiEvent, { type: 'status' }> | null;
    const stopMs = performance.now() - lostAt;
    const afterLoss = await storedRun(database, opened.runId);
    if (!ended) return { destroyed, ended, stopMs, afterLoss, resumed: null };

    const later: UiEvent[] = [];
    await worker.onEvent((e) => later.push(e));
    const again = await worker.api.open({ runId: opened.runId, database });
    await worker.api.start();
    const end = (await waitFor(later, (e) => e.type === 'status' && (e.status === 'finished' || e.status === 'failed'), 240_000)) as Extract<UiEvent, { type: 'status' }> | null;
    return {
      destroyed,
      ended,
      stopMs,
      afterLoss,
      resumed: { step: again.step, end, stored: await storedRun(database, opened.runId), events: later.map((e) => e.type) },
    };
  } finally {
    worker.terminate();
  }
}
