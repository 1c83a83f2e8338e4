// Page side of test/browser/judgeWorkerModel.test.ts: an engine model as the judge in the judge
// worker (its own GPU runtime) against the same model judging in this page, and the trainer
// worker handing an experiment's 'model' judge to a nested judge worker.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { fetchModelById } from '../../../src/model/source';
import { loadEngineJudge, modelJudgeName } from '../../../src/rl/judgeFactory';
import type { JudgeRequest } from '../../../src/rubric/judge';
import { parseRubric } from '../../../src/rubric/schema';
import { startJudgeWorker } from '../../../src/worker/judgeClient';
import { startTrainerWorker, type UiEvent } from '../../../src/worker/trainerClient';
import { workerJudge } from '../../../src/worker/workerJudge';
import { waitFor } from './resume';

const MODEL = '/test/fixtures/tiny-byte-gpt2/';

const RUBRIC = {
  name: 'judged',
  criteria: [
    { id: 'kind', text: 'Kind', weight: 1, tier: 'important', judge_question: 'Kind?' },
    { id: 'quality', text: 'Quality', weight: 1, tier: 'optional', judge_question: 'Good?', choices: ['bad', 'ok', 'good'] },
    { id: 'greets', text: 'Greets', weight: 1, tier: 'optional', rule: { kind: 'contains', terms: ['hello'] } },
  ],
};

const PAIRS: [string, string][] = [
  ['Say hi.', 'hello there'],
  ['Be kind.', 'go away'],
  ['Name a color.', 'blue'],
];

const outcome = (p: Promise<unknown>) => p.then(() => 'resolved', (e: Error) => `${e.name}: ${e.message}`);

export async function judgeWorkerVsPage(rt: GpuRuntime) {
  const rubric = parseRubric(RUBRIC);
  // Question criteria only (kind, quality) for every pair.
  const requests: JudgeRequest[] = PAIRS.flatMap(([prompt, completion]) =>
    rubric.criteria.slice(0, 2).map((criterion) => ({ rubricVersion: 'v1', prompt, completion, criterion })),
  );
  const client = startJudgeWorker();
  try {
    const configured = await client.configure({ model: { modelId: MODEL } });
    const fromWorker = await client.judgeQuestions(requests);
    // The same model, loaded in this page through the same engine code.
    const inPage = await loadEngineJudge(rt, await fetchModelById(MODEL), modelJudgeName(MODEL));
    const fromPage = await inPage.judge.judge(requests);
    inPage.release();

    // The proxy Judge, and a batch through judge() (rules here, questions by the same model).
    const viaProxy = await workerJudge(client, 'proxy').judge(requests);
    const batch = await client.judge(RUBRIC, PAIRS.map(([prompt, completion]) => ({ prompt, completion })));

    // Cancelled while queued in the worker (the cancel message arrives before its first pass).
    const stop = new AbortController();
    const cancelled = outcome(client.judgeQuestions(requests, { signal: stop.signal }));
    stop.abort();
    const abort = await cancelled;
    const afterAbort = await client.judgeQuestions(requests.slice(0, 1));

    const badRequest = await outcome(client.judgeQuestions([{ prompt: 'p', completion: 7 } as unknown as JudgeRequest]));
    const both = await outcome(client.configure({ model: { modelId: MODEL }, remote: { url: 'http://127.0.0.1:9/v1', model: 'm' } }));
    const missing = await outcome(client.configure({ model: { modelId: '/test/fixtures/no-such-model/' } }));
    // A failed configure changed nothing: the model still answers.
    const stateAfterFailures = await client.state();
    const stillJudging = await client.judgeQuestions(requests.slice(0, 1));

    const cleared = await client.configure({ model: null });
    const noJudge = await outcome(client.judgeQuestions(requests));
    return { configured, fromWorker, fromPage, viaProxy, batch, abort, afterAbort, badRequest, both, missing, stateAfterFailures, stillJudging, cleared, noJudge };
  } finally {
    client.terminate();
  }
}

const EXPERIMENT = {
  model: MODEL,
  prompts: ['Say hi.', 'Be kind.'],
  rubric: {
    name: 'kind',
    criteria: [
      { id: 'kind', text: 'Kind', weight: 1, tier: 'important', judge_question: 'Kind?' },
      { id: 'ascii', text: 'Starts with printable ASCII', weight: 1, tier: 'optional', rule: { kind: 'regex', pattern: '^[ -~]' } },
    ],
  },
  config: { num_generations: 4, generation_batch_size: 8, max_completion_length: 3, learning_rate: 0.01, max_steps: 1, seed: 3 },
};


/** GPU bytes the trainer worker holds once a run with this judge is open (a fresh worker each). */
async function openedBytes(judge: unknown, database: string): Promise<number> {
  const trainer = startTrainerWorker();
  try {
    return (await trainer.api.open({ experiment: { ...EXPERIMENT, judge }, name: 'bytes', database })).gpuBytes;
  } finally {
    trainer.terminate();
  }
}

export async function trainerWithModelJudge() {
  const database = `judge-worker-model-test-${Date.now()}`;
  const rulesBytes = await openedBytes({ kind: 'rules' }, database);
  const trainer = startTrainerWorker();
  const events: UiEvent[] = [];
  try {
    await trainer.onEvent((e) => events.push(e));
    const opened = await trainer.api.open({ experiment: { ...EXPERIMENT, judge: { kind: 'model', model: MODEL } }, name: 'model judge', database });
    await trainer.api.singleStep();
    const done = await waitFor(events, (e) => e.type === 'step' || e.type === 'error' || (e.type === 'status' && e.status === 'failed'));
    const closed = await outcome(trainer.api.close());
    return {
      rulesBytes,
      modelJudgeBytes: opened.gpuBytes,
      done: done.type === 'step' ? { type: 'step', results: done.rollouts.map((r) => r.results), rewards: done.rollouts.map((r) => r.reward) } : done,
      closed,
    };
  } finally {
    trainer.terminate();
  }
}
