// Page side of test/browser/outOfMemory.test.ts: step 0 is trained and committed with its
// checkpoint, then the worker's test hook makes the next GPU allocation be refused as out of
// memory (the device itself keeps working) and step 1 runs; then the same worker resumes.
import { RunStore } from '../../../src/store';
import { parseTrainerState } from '../../../src/model/checkpoint';
import { startTrainerWorker, type UiEvent } from '../../../src/worker/trainerClient';
import { EXPERIMENT, waitFor } from './deviceLoss';

type Status = Extract<UiEvent, { type: 'status' }>;

async function stored(database: string, runId: string) {
  const store = await RunStore.open({ name: database });
  try {
    const run = await store.getRun(runId);
    const checkpoint = await store.latestCheckpoint(runId);
    return {
      status: run?.status,
      error: run?.error ?? null,
      steps: (await store.metrics(runId)).map((m) => m.step),
      checkpoint: checkpoint && { step: checkpoint.step, globalStep: parseTrainerState(checkpoint.files['trainer_state.json']).global_step, bytes: checkpoint.files['model.safetensors'].byteLength },
    };
  } finally {
    store.close();
  }
}

export async function refuseMidRun() {
  const database = `oom-test-${Date.now()}`;
  const worker = startTrainerWorker();
  try {
    const events: UiEvent[] = [];
    await worker.onEvent((e) => events.push(e));
    const opened = await worker.api.open({ experiment: EXPERIMENT, name: 'out of memory test', database });
    await worker.api.singleStep();
    if (!(await waitFor(events, (e) => e.type === 'status' && e.status === 'paused', 240_000))) throw new Error('step 0 never finished');
    const before = await stored(database, opened.runId);
    const hooked = await worker.api.failNextAllocationForTest();
    await worker.api.start();
    const ended = (await waitFor(events, (e) => e.type === 'status' && e.status !== 'running' && e.status !== 'paused', 240_000)) as Status | null;
    const afterFailure = await stored(database, opened.runId);
    if (!ended || ended.status !== 'failed') return { hooked, before, ended, afterFailure, resumed: null };

    const later: UiEvent[] = [];
    await worker.onEvent((e) => later.push(e));
    const again = await worker.api.open({ runId: opened.runId, database });
    await worker.api.start();
    const end = (await waitFor(later, (e) => e.type === 'status' && (e.status === 'finished' || e.status === 'failed'), 240_000)) as Status | null;
    return { hooked, before, ended, afterFailure, resumed: { step: again.step, end, stored: await stored(database, opened.runId) } };
  } finally {
    worker.terminate();
  }
}
