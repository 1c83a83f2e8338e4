// Page side of test/browser/tokenCredit.test.ts: one GRPO step on a fresh tiny byte-level GPT-2
// with each token-credit method, next to the same step with uniform credit (same seed, so the
// same rollouts), reporting the per-token weights, the views and the loss scalars.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { configFromHf } from '../../../src/model/config';
import { initialWeights } from '../../../src/model/init';
import { ParameterStore } from '../../../src/model/parameters';
import { ByteTokenizer } from '../../../src/model/tokenizer';
import { Transformer } from '../../../src/model/transformer';
import { parseRubric, rubricVersion } from '../../../src/rubric';
import { parseGrpoConfig, type GrpoConfigInput } from '../../../src/rl/config';
import { grpoStep } from '../../../src/rl/grpoStep';

const tok = new ByteTokenizer();

// n_positions leaves room for CoRT's rubric-conditioned prompt (about 130 bytes) and the completion.
// Random bytes from an untrained model: the first byte is ASCII about half the time (reward
// variance), and every non-empty completion meets "any" (so a negative rollout suppresses it).
const RUBRIC = {
  name: 'credit',
  criteria: [
    { id: 'ascii_start', text: 'Starts with an ASCII character', weight: 2, tier: 'important', rule: { kind: 'regex', pattern: '^[\\x00-\\x7f]' } },
    { id: 'any', text: 'Says something', weight: 1, tier: 'optional', rule: { kind: 'regex', pattern: '[\\s\\S]' } },
  ],
};

async function step(rt: GpuRuntime, options: GrpoConfigInput, stepNumber: number) {
  const config = configFromHf({ model_type: 'gpt2', vocab_size: tok.vocabSize, n_embd: 32, n_layer: 2, n_head: 4, n_inner: 64, n_positions: 160 });
  const model = new Transformer(rt, config, ParameterStore.create(rt, config, initialWeights(config, 11, 0.1)));
  const rubric = parseRubric(RUBRIC);
  const grpo = parseGrpoConfig(options);
  try {
    const prompts = Array.from({ length: grpo.generation_batch_size / grpo.num_generations }, (_, i) => `Say word ${i}.`);
    const submits = rt.counters.submits;
    const r = await grpoStep(
      {
        rt,
        model,
        reference: null,
        tokenizer: tok,
        formatPrompt: (text) => [tok.bosTokenId, ...tok.encode(`Instruction: ${text}\nResponse: `)],
        rubric,
        rubricVersion: await rubricVersion(rubric),
        config: grpo,
      },
      stepNumber,
      prompts,
    );
    return {
      submits: rt.counters.submits - submits,
      metrics: r.metrics,
      rollouts: r.rollouts.map((x) => ({
        advantage: x.advantage,
        reward: x.reward,
        completion: x.completion,
        n: x.completion_ids.length,
        truncated: x.truncated,
        token_weight: x.token_weight,
        token_span_credit: x.token_span_credit ?? null,
        token_entropy_pivot: x.token_entropy_pivot ?? null,
        token_cort_contrast: x.token_cort_contrast ?? null,
        token_entropy: x.token_entropy,
        suppressed: x.suppressed_criteria ?? [],
        unexplored: x.unexplored_criteria ?? [],
        spans: Object.fromEntries(x.results.map((res) => [res.criterion_id, res.status === 'ok' ? (res.spans ?? []) : []])),
      })),
    };
  } finally {
    model.params.destroy();
  }
}

/** The step with `options` and (unless withUniform is false) the same step with uniform credit. */
export async function creditStep(rt: GpuRuntime, input: { base: GrpoConfigInput; options: GrpoConfigInput; step?: number; withUniform?: boolean }) {
  const uniform = input.withUniform === false ? null : await step(rt, input.base, input.step ?? 0);
  const credited = await step(rt, { ...input.base, ...input.options }, input.step ?? 0);
  return { uniform, credited };
}

/** The rollout inspector on rollouts carrying CriPO marks and token-credit views: what the DOM shows. */
export async function inspectorMarks() {
  const { flushSync, mount, unmount } = await import('svelte');
  const { TrainingSession } = await import('../../../src/ui/lib/session.svelte');
  const { default: RolloutInspector } = await import('../../../src/ui/run/RolloutInspector.svelte');
  const target = document.createElement('div');
  document.body.append(target);
  const session = new TrainingSession();
  session.runExperiment = { model: 'x', prompts: ['p'], rubric: RUBRIC, config: { span_credit: 1, cripo_flip: true } };
  const base = { step: 0, group: 0, prompt: 'p', completion_ids: [1, 2, 3], logprobs: [-1, -1, -1], truncated: false, scores: [1, 1], reward: 0.5 };
  const results = [
    { criterion_id: 'ascii_start', status: 'ok' as const, score: 1, reason: 'matched', spans: [{ start: 0, end: 1 }] },
    { criterion_id: 'any', status: 'ok' as const, score: 1, reason: 'matched', spans: [{ start: 0, end: 1 }] },
  ];
  session.history.add(0, [
    { ...base, index: 0, completion: 'a<b>', tokens: ['a', '<b', '>'], advantage: -1, results, token_weight: [-3, 0, 0], token_span_credit: [3, 0, 0], suppressed_criteria: ['ascii_start', 'any'], unexplored_criteria: ['deep'] },
    { ...base, index: 1, completion: 'xyz', tokens: ['x', 'y', 'z'], advantage: 1, results, token_weight: [3, 0, 0], token_span_credit: [3, 0, 0], unexplored_criteria: ['deep'] },
  ]);
  session.historyVersion++;
  const app = mount(RolloutInspector, { target, props: { session } });
  flushSync();
  const heat = target.querySelector<HTMLSelectElement>('[data-testid=heat-quantity]')!;
  const read = () => ({
    unexplored: [...target.querySelectorAll('[data-testid=unexplored]')].map((e) => e.textContent!.replace(/\s+/g, ' ').trim()),
    suppressed: [...target.querySelectorAll('[data-testid=suppressed]')].map((e) => e.textContent!.replace(/\s+/g, ' ').trim()),
    values: [...target.querySelectorAll('[data-testid=token]')].map((t) => t.getAttribute('data-value')),
    flipped: [...target.querySelectorAll('[data-testid=token]')].map((t) => t.classList.contains('flipped')),
    titles: [...target.querySelectorAll('[data-testid=token]')].map((t) => t.getAttribute('title')),
    options: [...heat.options].map((o) => o.value),
    bold: target.querySelectorAll('b').length,
  });
  heat.value = 'span';
  heat.dispatchEvent(new Event('change'));
  flushSync();
  const span = read();
  heat.value = 'advantage';
  heat.dispatchEvent(new Event('change'));
  flushSync();
  const advantage = read();
  unmount(app);
  session.dispose();
  target.remove();
  return { span, advantage };
}
