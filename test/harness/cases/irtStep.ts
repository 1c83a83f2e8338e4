// Page side of test/browser/irtStep.test.ts: two GRPO steps on a fresh tiny byte-level GPT-2 with
// reward_aggregation irt_ability and a judge budget, over a fake judge that counts its requests:
// the item table is carried across the steps in the context, and the second step asks fewer questions.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { configFromHf } from '../../../src/model/config';
import { initialWeights } from '../../../src/model/init';
import { ParameterStore } from '../../../src/model/parameters';
import { ByteTokenizer } from '../../../src/model/tokenizer';
import { Transformer } from '../../../src/model/transformer';
import { parseRubric, rubricVersion, type Judge } from '../../../src/rubric';
import { irtRubricRewards } from '../../../src/rubric/irtOnline';
import { parseGrpoConfig, type GrpoConfigInput } from '../../../src/rl/config';
import { grpoStep, type GrpoContext } from '../../../src/rl/grpoStep';

const tok = new ByteTokenizer();

const RUBRIC = {
  name: 'irt',
  criteria: [
    { id: 'has_a', text: 'Contains the letter a', weight: 1, tier: 'optional', rule: { kind: 'contains', terms: ['a'], case_sensitive: true } },
    { id: 'q_even', text: 'Even', weight: 1, tier: 'important', judge_question: 'Is it even?' },
    { id: 'q_three', text: 'Three', weight: 1, tier: 'important', judge_question: 'Is it a multiple of three?' },
  ],
};

/** Deterministic verdicts from the completion's character codes; counts requests per step. */
function countingJudge(): { judge: Judge; requests: number[] } {
  const requests: number[] = [];
  return {
    requests,
    judge: {
      name: 'fake-counting',
      judge: async (rs) => {
        requests[requests.length - 1] += rs.length;
        return rs.map((r) => {
          const sum = [...r.completion].reduce((s, ch) => s + ch.charCodeAt(0), 0);
          const pass = r.criterion.id === 'q_even' ? sum % 2 === 0 : sum % 3 === 0;
          return { criterion_id: r.criterion.id, status: 'ok' as const, score: pass ? 1 : 0, reason: '' };
        });
      },
    },
  };
}

export async function steps(rt: GpuRuntime, input: { options: GrpoConfigInput; steps: number }) {
  const config = configFromHf({ model_type: 'gpt2', vocab_size: tok.vocabSize, n_embd: 32, n_layer: 2, n_head: 4, n_inner: 64, n_positions: 64 });
  const model = new Transformer(rt, config, ParameterStore.create(rt, config, initialWeights(config, 11, 0.1)));
  const grpo = parseGrpoConfig(input.options);
  const rubric = parseRubric(RUBRIC);
  const fake = countingJudge();
  const ctx = {
    rt,
    model,
    reference: null,
    tokenizer: tok,
    formatPrompt: (text: string) => [tok.bosTokenId, ...tok.encode(`Instruction: ${text}\nResponse: `)],
    rubric,
    rubricVersion: await rubricVersion(rubric),
    modelJudge: fake.judge,
    config: grpo,
  } as unknown as GrpoContext;
  const out: { rewards: (number | null)[]; expected: (number | null)[]; scored: number[]; tableSteps: number; stored: number }[] = [];
  try {
    for (let s = 0; s < input.steps; s++) {
      fake.requests.push(0);
      const r = await grpoStep(ctx, s, Array.from({ length: grpo.generation_batch_size / grpo.num_generations }, (_, i) => `Say word ${i}.`));
      const scores = r.rollouts.map((x) => x.scores!);
      out.push({
        rewards: r.rollouts.map((x) => x.reward),
        expected: irtRubricRewards(rubric, ctx.irt!, scores),
        scored: scores.map((row) => row.filter((v) => v !== null).length),
        tableSteps: ctx.irt!.steps,
        stored: ctx.irt!.patterns.reduce((n, [, count]) => n + count, 0),
      });
    }
    return { steps: out, requests: fake.requests };
  } finally {
    model.params.destroy();
  }
}
