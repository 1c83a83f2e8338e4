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

async function storeMetrics(database: string, runId: string) {
  const store = await RunStore.open({ name: database });
  try {
    return await store.metrics(runId);
  } finally {
    store.close();
  }
}

/** Resolves with the first event (already seen or still to come) that passes `test`. */
export function waitFor(events: UiEvent[], test: (e: UiEvent) => boolean): Promise<UiEvent> {
  return new Promise((resolve) => {
    const poll = () => {
      const hit = events.find(test);
      if (hit) resolve(hit);
      else setTimeout(poll, 20);
    };
    poll();
  });
}

/** A LoRA run: adapters on every projection, dropout on, and beta > 0 (the adapters-off reference). */
const LORA = { use_peft: true, lora_r: 4, lora_alpha: 8, lora_dropout: 0.1, lora_target_modules: 'all-linear', beta: 0.05 };

export async function killAndResume(_runtime: unknown, input: { lora?: boolean } = {}) {
  const database = `resume-test-${Date.now()}`;
  const experiment = input.lora ? { ...EXPERIMENT, config: { ...EXPERIMENT.config, ...LORA } } : EXPERIMENT;
  const first = startTrainerWorker();
  const events: UiEvent[] = [];
  await first.onEvent((e) => events.push(e));
  const opened = await first.api.open({ experiment, name: 'resume test', database });
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
  const exported = input.lora ? await second.api.exportAdapter() : null;
  second.terminate();
  store.close();
  return {
    parameters: opened.parameters,
    trainableParameters: opened.trainableParameters,
    adapterConfig: exported ? JSON.parse(exported['adapter_config.json'] as string) : null,
    metricsKl: (await storeMetrics(database, opened.runId)).map((m) => m.kl),
    firstDigest: cp1.digest, checkpointDigest: cp.digest, resumedDigest: resumed.digest, resumedStep: resumed.step, beforeFinish, after, status: run?.status, lastStep: run?.lastStep };
}
