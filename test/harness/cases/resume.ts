// Page side of test/browser/resume.test.ts: a run in the trainer worker is killed mid-run
// (worker.terminate(), like a crashed or closed tab) and reopened in a fresh worker.
import { RunStore } from '../../../src/store';
import { startTrainerWorker, type UiEvent } from '../../../src/worker/trainerClient';

const EXPERIMENT = {
  model: '/test/fixtures/tiny-byte-gpt2/',
  prompts: ['Name a color.', 'Say hello.', 'Name an animal.'],
  // The random byte model starts a completion with a printable ASCII byte about a third of the
  // time: enough reward variance that every step moves the weights.
  rubric: { name: 'ascii', criteria: [{ id: 'ascii_start', text: 'Starts with a printable ASCII character', weight: 1, tier: 'important', rule: { kind: 'regex', pattern: '^[ -~]' } }] },
  config: { num_generations: 4, generation_batch_size: 8, max_completion_length: 3, learning_rate: 0.05, max_steps: 3, save_steps: 1 },
};

function waitFor(events: UiEvent[], test: (e: UiEvent) => boolean): Promise<UiEvent> {
  return new Promise((resolve) => {
    const poll = () => {
      const hit = events.find(test);
      if (hit) resolve(hit);
      else setTimeout(poll, 20);
    };
    poll();
  });
}

export async function killAndResume() {
  const database = `resume-test-${Date.now()}`;
  const first = startTrainerWorker();
  const events: UiEvent[] = [];
  await first.onEvent((e) => events.push(e));
  const opened = await first.api.open({ experiment: EXPERIMENT, name: 'resume test', database });
  await first.api.start();
  // Kill as soon as the second checkpoint (global step 2) is announced: mid-run.
  const cp = (await waitFor(events, (e) => e.type === 'checkpoint' && e.step === 2)) as Extract<UiEvent, { type: 'checkpoint' }>;
  first.terminate();
  const cp1 = events.find((e) => e.type === 'checkpoint' && e.step === 1) as Extract<UiEvent, { type: 'checkpoint' }>;

  // A second worker in the same page would also find the lock free: the killed worker's lock is gone.
  const second = startTrainerWorker();
  const later: UiEvent[] = [];
  await second.onEvent((e) => later.push(e));
  const resumed = await second.api.open({ runId: opened.runId, database });
  const store = await RunStore.open({ name: database });
  const beforeFinish = { metrics: (await store.metrics(opened.runId)).length, rollouts: (await store.rollouts(opened.runId)).length };
  await second.api.start();
  await waitFor(later, (e) => e.type === 'status' && (e.status === 'finished' || e.status === 'failed'));
  const run = await store.getRun(opened.runId);
  const after = { metrics: (await store.metrics(opened.runId)).map((m) => m.step), rollouts: (await store.rollouts(opened.runId)).length };
  second.terminate();
  store.close();
  return { firstDigest: cp1.digest, checkpointDigest: cp.digest, resumedDigest: resumed.digest, resumedStep: resumed.step, beforeFinish, after, status: run?.status, lastStep: run?.lastStep };
}
