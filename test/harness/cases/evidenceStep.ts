// Page side of the evidence-required credit case of test/browser/grpo.test.ts: one GRPO step on a fresh tiny byte-level GPT-2
// with evidence-required credit and the vacuous-credit probe over a fake quoting judge, and a
// held-out copy of the rubric judged by the bare judge (not from the trained rubric's cache).
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { configFromHf } from '../../../src/model/config';
import { initialWeights } from '../../../src/model/init';
import { ParameterStore } from '../../../src/model/parameters';
import { ByteTokenizer } from '../../../src/model/tokenizer';
import { Transformer } from '../../../src/model/transformer';
import { JudgeCache, parseRubric, rubricVersion, type Judge } from '../../../src/rubric';
import { answerSpans } from '../../../src/rubric/evidence';
import { evidenceJudges, type EvidenceResult } from '../../../src/rubric/evidenceCredit';
import { parseGrpoConfig, type GrpoConfigInput } from '../../../src/rl/config';
import { grpoStep } from '../../../src/rl/grpoStep';

const tok = new ByteTokenizer();

const QUESTION = { id: 'says_something', text: 'Says something', weight: 1, tier: 'important', judge_question: 'Does the response say something?' };
const RUBRIC = {
  name: 'evidence',
  criteria: [QUESTION, { id: 'has_a', text: 'Contains the letter a', weight: 1, tier: 'optional', rule: { kind: 'contains', terms: ['a'], case_sensitive: true } }],
};

/** Passes everything, quoting the response's first word (none: no quote). */
const quotingJudge = (): { judge: Judge; requests: { completion: string; requireQuote?: boolean }[] } => {
  const requests: { completion: string; requireQuote?: boolean }[] = [];
  return {
    requests,
    judge: {
      name: 'fake-quoting',
      judge: async (rs) =>
        rs.map((r) => {
          requests.push({ completion: r.completion, ...(r.requireQuote ? { requireQuote: true } : {}) });
          // A maximal run of word characters holding a letter or digit: a whole-word quote.
          const word = r.completion.match(/[\p{L}\p{N}\p{M}_]+/gu)?.find((w) => /[\p{L}\p{N}]/u.test(w));
          const spans = word ? answerSpans(r.completion, `yes\nQuote: ${word}`) : [];
          return { criterion_id: r.criterion.id, status: 'ok' as const, score: 1, reason: 'yes', ...(spans.length ? { spans } : {}) };
        }),
    },
  };
};

export async function step(rt: GpuRuntime, input: { options: GrpoConfigInput }) {
  const config = configFromHf({ model_type: 'gpt2', vocab_size: tok.vocabSize, n_embd: 32, n_layer: 2, n_head: 4, n_inner: 64, n_positions: 64 });
  const model = new Transformer(rt, config, ParameterStore.create(rt, config, initialWeights(config, 11, 0.1)));
  const grpo = parseGrpoConfig(input.options);
  const rubric = parseRubric(RUBRIC);
  // The gold rubric is a copy of the trained one: the same version, so the same cache keys.
  const held = parseRubric(RUBRIC);
  const fake = quotingJudge();
  try {
    const r = await grpoStep(
      {
        rt,
        model,
        reference: null,
        tokenizer: tok,
        formatPrompt: (text) => [tok.bosTokenId, ...tok.encode(`Instruction: ${text}\nResponse: `)],
        rubric,
        rubricVersion: await rubricVersion(rubric),
        heldOut: { rubric: held, version: await rubricVersion(held) },
        ...evidenceJudges(fake.judge, grpo),
        judgeCache: new JudgeCache(),
        config: grpo,
      },
      0,
      Array.from({ length: grpo.generation_batch_size / grpo.num_generations }, (_, i) => `Say word ${i}.`),
    );
    return {
      metrics: { evidence: r.metrics.evidence, held_out: r.metrics.held_out, rewards: r.metrics.rewards },
      rollouts: r.rollouts.map((x) => ({ completion: x.completion, results: x.results as EvidenceResult[] })),
      requests: fake.requests,
    };
  } finally {
    model.params.destroy();
  }
}
