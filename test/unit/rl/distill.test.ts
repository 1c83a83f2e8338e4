// On-policy distillation (src/rl/distill/): the teacher's privileged prompt and batch, the row
// alignment between the teacher's and the student's layouts, the token weights, the loss
// coefficient and the step's metrics by hand; the combined gradient at the logits (policy loss +
// weight × mean divergence, as update.ts adds them) against finite differences on the float64
// twins; the options through config, links and the TRL export.
import { describe, expect, it } from 'vitest';
import type { Transformer } from '../../../src/model/transformer';
import { distillBackwardRef, distillForwardRef } from '../../../src/ops/distill.reference';
import { logprobsBackwardRef, logprobsForwardRef } from '../../../src/ops/logprobs.reference';
import { policyLossRef } from '../../../src/ops/policyLoss.reference';
import { readFileSync } from 'node:fs';
import { GrpoConfigError, parseGrpoConfig } from '../../../src/rl/config';
import { planMemory } from '../../../src/rl/memoryPlan';
import {
  alignmentCopies,
  alignTeacherRows,
  distillationOnly,
  distillGradCoefficient,
  distillMetrics,
  distillTeacher,
  distillTokenWeights,
  needsFrozenTeacher,
  privilegedPrompt,
  teacherTokens,
  tokenizerMismatch,
} from '../../../src/rl/distill';
import { decodeShareLink, encodeShareLink } from '../../../src/share/link';
import { FIRST_VISIT } from '../../../src/share/presets';
import { exportToTrl } from '../../../src/share/trlExport';
import { metricColumns, metricsToCsv } from '../../../src/share/csv';
import { readRunFile, runFileJson } from '../../../src/share/runFile';
import type { StepMetrics } from '../../../src/rl/grpoStep';
import { buildCharts } from '../../../src/ui/lib/series';
import { describeValue, heatPosition, heatScale, tokenValues, type TokenRollout } from '../../../src/ui/lib/tokenHeat';
import { metrics as storeMetrics } from '../store/fixtures';
import { normal, randomInts, rng } from '../../helpers/random';

/** Just what the teacher builder reads of a model: its context and vocabulary. */
const fakeModel = (maxPositions: number, vocabSize = 259) => ({ config: { maxPositions, vocabSize } }) as unknown as Transformer;
const bytes = (text: string) => Array.from(new TextEncoder().encode(text));
const criteria = [
  { text: 'Names a colour', weight: 2 },
  { text: 'Rambles', weight: -1 },
];

describe('the self_rubric teacher', () => {
  it('sees the prompt followed by the rubric: criteria to meet and pitfalls to avoid', () => {
    expect(privilegedPrompt('Describe the sky.', criteria)).toBe('Describe the sky.\n\nA good answer meets these criteria:\n- Names a colour\nIt avoids:\n- Rambles');
  });

  it('scores the student\'s own completion after its privileged prompt, with the frozen or the live weights', () => {
    const policy = fakeModel(512);
    const reference = fakeModel(512);
    const config = parseGrpoConfig({ distillation: { teacher: 'self_rubric' } });
    const src = { model: policy, reference, formatPrompt: bytes, criteria, padTokenId: 0, config };
    const completions = [[7, 8, 9], [5]];
    const t = distillTeacher(src, ['Hi', 'Sky?'], completions)!;
    expect(t.model).toBe(reference);
    expect(t.weights).toBe('frozen');
    const P = Math.max(...['Hi', 'Sky?'].map((p) => bytes(privilegedPrompt(p, criteria)).length));
    expect(t.batch.tokens.seqLen).toBe(P + 3);
    expect(t.batch.completionStart).toBe(P - 1);
    // Row 0 (the shorter prompt): left padding, privileged prompt, completion. Row 1: prompt, completion, right padding.
    const row0 = Array.from(teacherTokens(t, 0, 1).ids);
    const prompt0 = bytes(privilegedPrompt('Hi', criteria));
    expect(row0.slice(P - prompt0.length, P)).toEqual(prompt0);
    expect(row0.slice(P)).toEqual([7, 8, 9]);
    const row1 = Array.from(teacherTokens(t, 1, 1).ids);
    expect(row1.slice(0, P)).toEqual(bytes(privilegedPrompt('Sky?', criteria)));
    expect(row1.slice(P)).toEqual([5, 0, 0]);
    // The live teacher is the policy itself.
    const live = parseGrpoConfig({ distillation: { teacher: 'self_rubric', teacher_weights: 'live' } });
    expect(distillTeacher({ ...src, config: live }, ['Hi'], [[1]])!.model).toBe(policy);
    expect(needsFrozenTeacher(config)).toBe(true);
    expect(needsFrozenTeacher(live)).toBe(false);
  });

  it('is absent when off, and refuses what it cannot do with a message', () => {
    const src = { model: fakeModel(64), reference: null, formatPrompt: bytes, criteria, padTokenId: 0, config: parseGrpoConfig({}) };
    expect(distillTeacher(src, ['Hi'], [[1]])).toBeNull();
    const on = parseGrpoConfig({ distillation: { teacher: 'self_rubric' } });
    expect(() => distillTeacher({ ...src, config: on }, ['Hi'], [[1]])).toThrow(/frozen self_rubric teacher needs the starting model/);
    const live = parseGrpoConfig({ distillation: { teacher: 'self_rubric', teacher_weights: 'live' } });
    expect(() => distillTeacher({ ...src, config: live }, ['Hi'], [[1]])).toThrow(/above the teacher's context of 64/);
    expect(() => distillTeacher({ ...src, model: fakeModel(512), config: live, criteria: [] }, ['Hi'], [[1]])).toThrow(/rubric with at least one criterion/);
  });
});

describe('the model teacher', () => {
  const config = parseGrpoConfig({ distillation: { teacher: 'model', teacher_model: 'local:bigger' } });
  const base = { model: fakeModel(512), reference: null, formatPrompt: bytes, criteria, padTokenId: 0, config };

  it('scores the student\'s completion after the student\'s own prompt, in the teacher\'s template', () => {
    const teacherModel = { model: fakeModel(512), formatPrompt: (t: string) => bytes(`T: ${t}`) };
    const t = distillTeacher({ ...base, teacherModel }, ['Hi'], [[7, 8]])!;
    expect(t.model).toBe(teacherModel.model);
    expect(Array.from(t.batch.tokens.ids)).toEqual([...bytes('T: Hi'), 7, 8]);
    expect(t.batch.completionStart).toBe(bytes('T: Hi').length - 1);
  });

  it('refuses a teacher that is not loaded, or whose vocabulary differs', () => {
    expect(() => distillTeacher(base, ['Hi'], [[1]])).toThrow(/teacher model local:bigger was not loaded/);
    expect(() => distillTeacher({ ...base, teacherModel: { model: fakeModel(512, 300), formatPrompt: bytes } }, ['Hi'], [[1]])).toThrow(
      /the teacher model's vocabulary has 300 entries, the student's 259/,
    );
  });

  it('needs a model id', () => {
    expect(() => parseGrpoConfig({ distillation: { teacher: 'model' } })).toThrow(/distillation\.teacher_model: the "model" teacher needs a model id/);
  });
});

describe('the tokenizer check', () => {
  const byte = { config: { vocab_size: 259, rubric_playground: { tokenizer: 'byte' } } };
  const bpe = (vocab: Record<string, number>, added: { id: number; content: string; special: boolean }[] = [], special: Record<string, unknown> = {}) => ({
    config: { vocab_size: Object.keys(vocab).length + added.length },
    tokenizerJson: { model: { type: 'BPE', vocab }, added_tokens: added },
    tokenizerConfig: special,
  });
  const vocab = { a: 0, b: 1, ab: 2 };
  const eos = [{ id: 3, content: '<|end|>', special: true }];

  it('passes the same tokenizer', () => {
    expect(tokenizerMismatch(byte, structuredClone(byte))).toBeNull();
    expect(tokenizerMismatch(bpe(vocab, eos, { eos_token: '<|end|>' }), bpe({ ab: 2, b: 1, a: 0 }, eos, { eos_token: { content: '<|end|>' } }))).toBeNull();
  });

  it('names the first difference', () => {
    expect(tokenizerMismatch(byte, bpe(vocab))).toBe("the teacher model must use the student's tokenizer: the teacher uses a tokenizer.json tokenizer, the student the byte tokenizer");
    expect(tokenizerMismatch(byte, { config: { vocab_size: 300, rubric_playground: { tokenizer: 'byte' } } })).toMatch(/the teacher's vocabulary has 300 entries \(vocab_size\), the student's 259$/);
    expect(tokenizerMismatch(bpe(vocab), bpe({ a: 0, b: 2, ab: 1 }))).toMatch(/token "b" is id 1 for the student and id 2 for the teacher$/);
    expect(tokenizerMismatch(bpe(vocab), bpe({ a: 0, b: 1, ba: 2 }))).toMatch(/token "ab" is id 2 for the student and missing for the teacher$/);
    expect(tokenizerMismatch(bpe(vocab, eos), bpe(vocab, [{ id: 3, content: '</s>', special: true }]))).toMatch(/added token id 3 is "<\|end\|>" \(special\) for the student and "<\/s>" \(special\) for the teacher$/);
    expect(tokenizerMismatch(bpe(vocab, eos, { eos_token: '<|end|>' }), bpe(vocab, eos, { eos_token: '<|end|>', pad_token: '<|end|>' }))).toMatch(/pad_token is not set for the student and "<\|end\|>" for the teacher$/);
  });
});

describe('alignment of the teacher rows with the student rows', () => {
  it('copies each sequence\'s completion positions, one block per sequence', () => {
    // Student: P = 3, L = 4 → T = 7, start 2. Teacher: P' = 6 → T' = 10, start 5.
    const copies = alignmentCopies(2, { seqLen: 7, completionStart: 2 }, { seqLen: 10, completionStart: 5 });
    expect(copies).toEqual([
      { from: 5, to: 2, rows: 4 },
      { from: 15, to: 9, rows: 4 },
    ]);
    expect(() => alignmentCopies(1, { seqLen: 7, completionStart: 2 }, { seqLen: 10, completionStart: 4 })).toThrow(/5 completion positions per sequence, the student's 4/);
  });

  it('puts teacher row b·T\' + P\' − 1 + j at student row b·T + P − 1 + j and 0 elsewhere', () => {
    // Student: P = 2, L = 2 → T = 4, start 1. Teacher: P' = 3 → T' = 5, start 2. V = 2; teacher
    // rows hold their own index (and a tenth for the second entry), so the result shows where each came from.
    const student = { seqLen: 4, completionStart: 1 };
    const teacher = { seqLen: 5, completionStart: 2 };
    const t = Array.from({ length: 2 * 5 * 2 }, (_, i) => Math.floor(i / 2) + (i % 2) / 10);
    const out = Array.from(alignTeacherRows(t, 2, 2, student, teacher));
    expect(out).toEqual([0, 0, 2, 2.1, 3, 3.1, 0, 0, 0, 0, 7, 7.1, 8, 8.1, 0, 0]);
  });
});

describe('token weights, loss coefficient and metrics', () => {
  it('distils the completion tokens the entropy mask keeps', () => {
    expect(Array.from(distillTokenWeights([0, 1, 1, 1], null))).toEqual([0, 1, 1, 1]);
    expect(Array.from(distillTokenWeights([0, 1, 1, 1], [1, 0, 1, 1]))).toEqual([0, 0, 1, 1]);
  });

  it('divides the weight by the optimizer step\'s completion tokens (TRL batchmean)', () => {
    expect(distillGradCoefficient(0.5, 4)).toBe(0.125);
    expect(distillGradCoefficient(1, 0)).toBe(0);
  });

  it('reports the mean divergence and agreement over distilled tokens, and the retained count', () => {
    const m = distillMetrics({
      divergence: [9, 0.2, 0.4, 0.6, 0],
      studentTop: [1, 2, 3, 4, 5],
      teacherTop: [1, 2, 0, 4, 5],
      weights: [0, 1, 1, 1, 0],
      mask: [0, 1, 1, 1, 1],
      weight: 0.5,
    });
    expect(m.divergence).toBeCloseTo(0.4, 12);
    expect(m.top1_agreement).toBeCloseTo(2 / 3, 12);
    expect(m.retained_tokens).toBe(3);
    expect(m.completion_tokens).toBe(4);
    expect(m.loss).toBeCloseTo((0.5 * 1.2) / 4, 12);
    expect(distillMetrics({ divergence: [1], studentTop: [0], teacherTop: [0], weights: [0], mask: [0], weight: 1 })).toEqual({
      divergence: null,
      top1_agreement: null,
      retained_tokens: 0,
      completion_tokens: 0,
      loss: 0,
    });
  });
});

describe('the combined gradient at the student logits (finite differences on the twins)', () => {
  // update.ts: d(policy loss)/d logits from the log-prob backward, plus the distill kernel's
  // gradient of coefficient × Σ_t w_t D_t, accumulated into the same buffer before the backward.
  const N = 2;
  const L = 3;
  const V = 5;
  const rows = N * L;
  const rand = rng(11);
  const z0 = normal(rand, rows * V, 1.5);
  const teacher = normal(rand, rows * V, 1.5);
  const tokens = randomInts(rand, rows, V);
  const mask = [1, 1, 0, 1, 1, 1];
  const entropyMask = [1, 0, 1, 1, 1, 1];
  const weights = distillTokenWeights(mask, entropyMask);
  const advantages = [0.8, -0.6];
  const sampleTemperature = 0.7;
  const old = logprobsForwardRef({ logits: z0, tokens, rows, vocab: V, temperature: sampleTemperature }).logprobs;
  const lossOptions = { lossType: 'dapo' as const, epsilon: 0.2, epsilonHigh: 0.28, beta: 0 };

  for (const beta of [0, 0.5, 1]) {
    for (const mode of ['mixed', 'pure'] as const) {
      it(`distillation beta ${beta}, ${mode}`, () => {
        const weight = 0.7;
        const coefficient = distillGradCoefficient(weight, mask.reduce((a, b) => a + b, 0));
        const adv = mode === 'pure' ? [0, 0] : advantages;
        const problem = (z: ArrayLike<number>) => ({ student: z, teacher, rows, vocab: V, beta, temperature: 0.9, topK: null, mask: weights });
        const loss = (z: ArrayLike<number>) => {
          const lp = logprobsForwardRef({ logits: z, tokens, rows, vocab: V, temperature: sampleTemperature }).logprobs;
          const policy = policyLossRef({ n: N, l: L, logprobs: lp, oldLogprobs: old, mask, advantages: adv, options: lossOptions }).loss;
          const d = distillForwardRef(problem(z)).loss;
          return policy + coefficient * d.reduce((a, b) => a + b, 0);
        };
        const lp = logprobsForwardRef({ logits: z0, tokens, rows, vocab: V, temperature: sampleTemperature }).logprobs;
        const policy = policyLossRef({ n: N, l: L, logprobs: lp, oldLogprobs: old, mask, advantages: adv, options: lossOptions });
        const grad = logprobsBackwardRef({ logits: z0, tokens, rows, vocab: V, temperature: sampleTemperature }, policy.gradLogprobs);
        const distill = distillBackwardRef(problem(z0), new Float64Array(rows).fill(coefficient));
        const combined = grad.map((g, i) => g + distill[i]);
        const h = 1e-5;
        let worst = 0;
        for (let i = 0; i < rows * V; i++) {
          const up = z0.slice();
          const down = z0.slice();
          up[i] += h;
          down[i] -= h;
          const fd = (loss(up) - loss(down)) / (2 * h);
          worst = Math.max(worst, Math.abs(fd - combined[i]));
        }
        expect(worst).toBeLessThan(1e-8);
        // The distillation term is really there (and in pure mode it is all there is).
        const distillSize = distill.reduce((a, b) => a + Math.abs(b), 0);
        expect(distillSize).toBeGreaterThan(1e-3);
        if (mode === 'pure') expect(grad.every((g) => g === 0)).toBe(true);
        // Rows out of the loss (masked, or dropped by the entropy mask) get no distillation gradient.
        for (const r of [1, 2]) for (let v = 0; v < V; v++) expect(distill[r * V + v]).toBe(0);
      });
    }
  }
});

describe('the memory plan', () => {
  const embedded = JSON.parse(readFileSync('public/models/tiny-gpt2-byte/config.json', 'utf8'));
  const limits = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 30 };
  const plan = (extra: Record<string, unknown>) =>
    planMemory(embedded, ['Describe the sea.'], parseGrpoConfig({ max_completion_length: 32, ...extra }), limits, undefined, [{ text: 'Names a colour', weight: 1 } as never]).estimate;

  it('counts the frozen teacher\'s weights (as beta\'s reference) and the teacher pass in every update submission', () => {
    const off = plan({});
    const frozen = plan({ distillation: { teacher: 'self_rubric' } });
    const live = plan({ distillation: { teacher: 'self_rubric', teacher_weights: 'live' } });
    expect(off.referenceModel).toBe(0);
    expect(frozen.referenceModel).toBe(plan({ beta: 0.04 }).referenceModel);
    expect(frozen.referenceModel).toBeGreaterThan(0);
    expect(live.referenceModel).toBe(0);
    expect(live.total).toBeGreaterThan(off.total);
    expect(frozen.total).toBeGreaterThan(live.total);
    // Under LoRA the frozen teacher is the base with the adapters off: no copy.
    expect(plan({ use_peft: true, distillation: { teacher: 'self_rubric' } }).referenceModel).toBe(0);
  });

  it('counts a teacher model\'s weights (no gradients) from its config.json, and refuses another vocabulary', () => {
    const model = parseGrpoConfig({ max_completion_length: 32, distillation: { teacher: 'model', teacher_model: 'local:big' } });
    const at = (teacher: Record<string, unknown> | null) => planMemory(embedded, ['Describe the sea.'], model, limits, undefined, [], teacher).estimate;
    // The same shape: exactly its weights (the student's full fine-tuning also keeps gradients).
    const same = at(embedded);
    const weights = plan({}).weights;
    expect(same.referenceModel).toBe(weights);
    // Twice the layers: more weights, a bigger teacher pass.
    const deeper = at({ ...embedded, n_layer: 8 });
    expect(deeper.referenceModel).toBeGreaterThan(1.9 * weights);
    expect(deeper.total).toBeGreaterThan(same.total);
    expect(() => at({ ...embedded, vocab_size: 300 })).toThrow(/the distillation teacher's vocabulary has 300 entries, the student's 259/);
  });
});

describe('the distillation options', () => {
  it('default to off, with TRL GKDConfig\'s beta and temperature', () => {
    expect(parseGrpoConfig({}).distillation).toMatchObject({ teacher: 'off', teacher_model: null, teacher_weights: 'frozen', mode: 'mixed', weight: 1, beta: 0.5, temperature: 0.9, top_k: null });
    // The training modes (schedule.ts, selection.ts, ema.ts): on-policy, no schedule, no selection of their own.
    expect(parseGrpoConfig({}).distillation).toMatchObject({ lmbda: 1, schedule: { kind: 'none' }, top_entropy_quantile: null, mask_special_tokens: false, ema_decay: 0.99 });
    expect(distillationOnly(parseGrpoConfig({ distillation: { teacher: 'self_rubric', mode: 'pure' } }))).toBe(true);
    expect(distillationOnly(parseGrpoConfig({ distillation: { mode: 'pure' } }))).toBe(false);
  });

  it('refuse bad values and options pure distillation cannot use, naming them', () => {
    const issues = (input: unknown) => {
      try {
        parseGrpoConfig(input);
        return [];
      } catch (e) {
        return (e as GrpoConfigError).issues.map((i) => `${i.path}: ${i.message}`);
      }
    };
    expect(issues({ distillation: { beta: 1.5 } })[0]).toMatch(/^distillation\.beta: /);
    expect(issues({ distillation: { teacher: 'oracle' } })[0]).toMatch(/^distillation\.teacher: /);
    expect(issues({ distillation: { temprature: 1 } })[0]).toMatch(/temprature/);
    expect(issues({ distillation: { teacher: 'self_rubric', mode: 'pure' }, dynamic_sampling: true })).toEqual([
      'dynamic_sampling: has no effect with distillation mode "pure": pure distillation judges nothing and trains on no reward or advantage. Turn dynamic_sampling off, or use distillation mode "mixed"',
    ]);
    expect(issues({ distillation: { teacher: 'self_rubric', mode: 'mixed' }, dynamic_sampling: true })).toEqual([]);
  });

  it('travel in a share link', () => {
    const experiment = { ...structuredClone(FIRST_VISIT.experiment), config: { ...FIRST_VISIT.experiment.config, distillation: { teacher: 'self_rubric', teacher_weights: 'live', mode: 'pure', beta: 0.2, top_k: 5 } } };
    const back = decodeShareLink(encodeShareLink({ experiment }));
    expect(back.experiment.config.distillation).toEqual({ teacher: 'self_rubric', teacher_weights: 'live', mode: 'pure', beta: 0.2, top_k: 5 });
  });

  it('are written into the TRL export as what GRPOTrainer lacks, with the matching GKDConfig', async () => {
    const experiment = { ...structuredClone(FIRST_VISIT.experiment), config: { ...FIRST_VISIT.experiment.config, distillation: { teacher: 'self_rubric', mode: 'pure', beta: 0.2 } } };
    const { files, notes } = await exportToTrl(experiment);
    const script = files['train_grpo.py'];
    expect(script).toContain("# TRL's on-policy distillation is GKDTrainer with GKDConfig(");
    expect(notes.some((n) => n.startsWith('distillation teacher "self_rubric" (frozen weights'))).toBe(true);
    expect(script).toMatch(/GKDConfig\(lmbda=1\.0, beta=0\.2, temperature=0\.9, max_new_tokens=\d+\)/);
    const model = { ...structuredClone(FIRST_VISIT.experiment), config: { ...FIRST_VISIT.experiment.config, distillation: { teacher: 'model', teacher_model: 'hf:Qwen/Qwen2.5-1.5B-Instruct' } } };
    expect((await exportToTrl(model)).files['train_grpo.py']).toContain('teacher_model_name_or_path="Qwen/Qwen2.5-1.5B-Instruct")');
    const plain = await exportToTrl(FIRST_VISIT.experiment);
    expect(plain.files['train_grpo.py']).not.toContain('GKD');
  });
});

describe('the step\'s distillation data in exports, charts and the token heatmap', () => {
  const distillation = { divergence: 0.3, top1_agreement: 0.5, retained_tokens: 10, completion_tokens: 12, loss: 0.25 };
  const withDistillation = (step: number): StepMetrics => ({ ...storeMetrics(step), distillation });

  it('a run file keeps the metrics; CSV has distill/ columns only when a step has them', async () => {
    const back = await readRunFile(await runFileJson({ name: 'r', experiment: structuredClone(FIRST_VISIT.experiment), metrics: [storeMetrics(0), withDistillation(1)], rollouts: [] }));
    expect(back.metrics[0].distillation).toBeUndefined();
    expect(back.metrics[1].distillation).toEqual(distillation);
    expect(metricColumns([storeMetrics(0)]).some((c) => c.startsWith('distill/'))).toBe(false);
    const [header, first, second] = metricsToCsv([storeMetrics(0), withDistillation(1)]).trim().split(/\r?\n/);
    const cols = header.split(',');
    const at = (row: string, name: string) => row.split(',')[cols.indexOf(name)];
    expect(at(first, 'distill/divergence')).toBe('');
    expect(at(second, 'distill/divergence')).toBe('0.3');
    expect(at(second, 'distill/top1_agreement')).toBe('0.5');
    expect(at(second, 'distill/retained_tokens')).toBe('10');
  });

  it('a chart next to the reward, only for runs that distil', () => {
    expect(buildCharts([storeMetrics(0)], [], 0).some((c) => c.id === 'distillation')).toBe(false);
    const charts = buildCharts([storeMetrics(0), withDistillation(1)], [], 0);
    const i = charts.findIndex((c) => c.id === 'distillation');
    expect(charts[i - 1].id).toBe('reward');
    expect(charts[i].ys).toEqual([[null, 0.3], [null, 0.5], [null, 10 / 12]]);
    expect(charts[i].note).toContain('10 of 12');
    // Pure distillation (no judge_failures: nothing judged) has no reward by design, not a judge failure.
    const pure = { ...withDistillation(2), judge_failures: undefined, rewards: { ...storeMetrics(2).rewards, reward: null, reward_std: null } };
    expect(buildCharts([pure], [], 0)[0].empty).toMatch(/^Pure distillation judges nothing/);
    expect(buildCharts([storeMetrics(0)], [], 0)[0].empty).toMatch(/unscorable/);
  });

  it('the heatmap shows each token\'s divergence, none where the token was not distilled', () => {
    const r = { logprobs: [-1, -2, -3], tokens: ['a', 'b', 'c'], token_divergence: [0.2, null, 0.8] } as unknown as TokenRollout;
    expect(tokenValues(r, 'divergence')).toEqual([0.2, null, 0.8]);
    const scale = heatScale('divergence', tokenValues(r, 'divergence'));
    expect(scale).toMatchObject({ kind: 'sequential', extent: 0.8 });
    expect(heatPosition(scale, 0.2)).toBeCloseTo(0.25, 12);
    expect(describeValue('divergence', 0.2, false)).toBe('distillation divergence 0.2 nats');
    expect(describeValue('divergence', null, false)).toMatch(/not recorded \(its option is off/);
  });
});
