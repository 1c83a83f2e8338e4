// Page side of test/browser/judgeChoice.test.ts: one GRPO step whose judge-question criterion
// is answered by the judge the experiment names (self, another model, a remote endpoint).
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { fetchModelFiles, modelUrl } from '../../../src/model/load';
import { buildGrpoContext, releaseGrpoContext } from '../../../src/rl/context';
import { grpoStep } from '../../../src/rl/grpoStep';

const MODEL = '/test/fixtures/tiny-byte-gpt2/';

export interface JudgeChoiceRequest {
  judge: unknown;
  apiKey?: string;
  /** For the remote judge: the reply the fake endpoint gives. */
  reply?: string;
  numIterations?: number;
}

export async function stepWithJudge(rt: GpuRuntime, req: JudgeChoiceRequest) {
  const experiment = {
    model: MODEL,
    prompts: ['Say hi.', 'Be kind.'],
    rubric: {
      name: 'kind',
      criteria: [
        { id: 'kind', text: 'Kind', weight: 1, tier: 'important', judge_question: 'Kind?' },
        { id: 'ascii', text: 'Starts with printable ASCII', weight: 1, tier: 'optional', rule: { kind: 'regex', pattern: '^[ -~]' } },
      ],
    },
    judge: req.judge,
    config: { num_generations: 4, generation_batch_size: 8, max_completion_length: 3, learning_rate: 0.01, num_iterations: req.numIterations ?? 1, seed: 3 },
  };
  // A fake OpenAI-compatible endpoint: records what it is sent, answers with a fixed reply.
  const sent: { url: string; authorization: string | null; body: string }[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input);
    if (!url.startsWith('https://judge.example.test/')) return realFetch(input, init);
    sent.push({ url, authorization: new Headers(init?.headers).get('authorization'), body: String(init?.body) });
    return new Response(JSON.stringify({ choices: [{ message: { role: 'assistant', content: req.reply ?? 'yes' } }] }), { headers: { 'content-type': 'application/json' } });
  };
  try {
    const files = await fetchModelFiles(MODEL);
    const ctx = await buildGrpoContext(rt, experiment, files, { judgeApiKey: req.apiKey });
    const bytesWithJudge = rt.pool.snapshot().bytesInUse;
    const result = await grpoStep(ctx, 0, experiment.prompts);
    releaseGrpoContext(ctx);
    return {
      judgeName: ctx.modelJudge?.name ?? null,
      bytesWithJudge,
      bytesAfterRelease: rt.pool.snapshot().bytesInUse,
      results: result.rollouts.map((r) => r.results),
      rewards: result.rollouts.map((r) => r.reward),
      tokens: result.rollouts.map((r) => ({ ids: r.completion_ids, tokens: r.tokens, entropy: r.token_entropy, ratio: r.token_ratio, weight: r.token_weight })),
      sent,
      rolloutsJson: JSON.stringify(result.rollouts),
      metricsJson: JSON.stringify(result.metrics),
    };
  } finally {
    globalThis.fetch = realFetch;
  }
}

/**
 * RaR's holistic judge through a GRPO step (reward_aggregation "holistic_likert", judge self) on
 * the embedded model: its 256-byte context holds the compact holistic prompt for a short rubric,
 * where the fixture model's 128 could not.
 */
export async function stepHolistic(rt: GpuRuntime) {
  const experiment = {
    model: 'embedded/tiny-gpt2-byte',
    prompts: ['Describe the sea.', 'Name a fruit.'],
    rubric: {
      name: 'blue',
      criteria: [{ id: 'blue', text: 'Says blue', weight: 1, tier: 'essential', rule: { kind: 'contains', terms: ['blue'] } }],
    },
    judge: { kind: 'self' },
    config: { num_generations: 2, generation_batch_size: 4, max_completion_length: 12, learning_rate: 0.01, seed: 5, reward_aggregation: { method: 'holistic_likert' } },
  };
  const ctx = await buildGrpoContext(rt, experiment, await fetchModelFiles(modelUrl(experiment.model)));
  const result = await grpoStep(ctx, 0, experiment.prompts);
  // The same judge asked directly, outside the step: the step's holistic scores must be its answers.
  const direct = await ctx.modelJudge!.judge(
    result.rollouts.map((r) => ({ rubricVersion: ctx.rubricVersion, prompt: r.prompt, completion: r.completion, criterion: ctx.rubric.criteria[1] })),
  );
  releaseGrpoContext(ctx);
  return {
    criteria: ctx.rubric.criteria.map((c) => c.id),
    results: result.rollouts.map((r) => r.results),
    rewards: result.rollouts.map((r) => r.reward),
    direct,
    metrics: result.metrics,
  };
}

/**
 * The generative verdict (judge_verdict "generative") on the engine: the embedded model (its
 * 256-byte context holds the compact verdict prompts; the fixture model's 128 could not), loaded
 * frozen as an engine judge, writes a verdict line for one response and criterion, then a
 * two-criterion checklist for it, through generate(). Returns the verdicts and the seconds.
 */
export async function generativeVerdicts(rt: GpuRuntime) {
  const { engineJudge } = await import('../../../src/rl/judgeFactory');
  const { loadModel } = await import('../../../src/model/load');
  const { parseRubric } = await import('../../../src/rubric/schema');
  const rubric = parseRubric({
    name: 'gen',
    criteria: [
      { id: 'kind', text: 'Kind', weight: 1, tier: 'important', judge_question: 'Kind?' },
      { id: 'short', text: 'Short', weight: 1, tier: 'optional', judge_question: 'Short?' },
    ],
  });
  const loaded = await loadModel(rt, await fetchModelFiles(modelUrl('embedded/tiny-gpt2-byte')), { frozen: true });
  try {
    const judge = engineJudge(loaded, 'self');
    const request = (criterion: (typeof rubric.criteria)[number], scope: 'per_criterion' | 'checklist') => ({
      rubricVersion: 'v',
      prompt: 'Say hi.',
      completion: 'Hello, friend.',
      criterion,
      design: { verdict: 'generative' as const, scope },
    });
    const t0 = performance.now();
    const checklist = await judge.judge(rubric.criteria.map((c) => request(c, 'checklist')));
    const t1 = performance.now();
    const single = await judge.judge([request(rubric.criteria[0], 'per_criterion')]);
    return { single, checklist, checklistSeconds: (t1 - t0) / 1000, singleSeconds: (performance.now() - t1) / 1000 };
  } finally {
    loaded.model.params.destroy();
  }
}
