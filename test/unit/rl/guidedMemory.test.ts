// The memory estimate counts what guided exploration and CoRT add before the update
// (src/model/memory.ts, src/rl/memoryPlan.ts): CoRT's two inference passes, the guided rollouts'
// own generate() call, their re-scoring pass and their rows in the update.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configFromHf } from '../../../src/model/config';
import { estimateTrainingBytes, poolBucket, updateBuffers, type TrainingShape } from '../../../src/model/memory';
import { parseRubric } from '../../../src/rubric';
import { parseGrpoConfig } from '../../../src/rl/config';
import { guidedPromptBound, guidedRowsBound } from '../../../src/rl/explore/guidedBounds';
import { revisionGuidance } from '../../../src/rl/explore/hindsight';
import { planMemory } from '../../../src/rl/memoryPlan';

const hf = JSON.parse(readFileSync(new URL('../../../public/models/tiny-gpt2-byte/config.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const model = configFromHf(hf);
const V = model.vocabSize;
const shape = (over: Partial<TrainingShape>): TrainingShape => ({ config: model, lora: null, numGenerations: 4, promptsPerStep: 2, promptTokens: 32, completionTokens: 16, beta: 0, ...over });
const limits = { maxBufferSize: 2 ** 31, maxStorageBufferBindingSize: 2 ** 31 };
const RUBRIC = parseRubric({
  name: 'r',
  criteria: [
    { id: 'a', text: 'Mentions apples', weight: 2, tier: 'important', rule: { kind: 'contains', terms: ['apple'] } },
    { id: 'c', text: 'Swears', weight: -1, tier: 'optional', rule: { kind: 'contains', terms: ['damn'] } },
  ],
});

describe('memory of the passes and rows beyond plain GRPO', () => {
  it("CoRT's two inference passes: the rubric-conditioned pass's [N·T′ × V] logits are new buffers", () => {
    const plain = estimateTrainingBytes(shape({}));
    const cort = estimateTrainingBytes(shape({ cortPromptTokens: 80 }));
    expect(plain.passes).toBe(0);
    const logits = poolBucket(8 * (80 + 16) * V * 4);
    expect(cort.passes).toBeGreaterThanOrEqual(logits);
    // The update then reuses some of what the passes left in the pool: the total grows by at most the passes.
    expect(cort.total - plain.total).toBeGreaterThanOrEqual(logits);
    expect(cort.total - plain.total).toBeLessThanOrEqual(cort.passes);
    expect(cort.totalIfTrimmed).toBeGreaterThanOrEqual(plain.totalIfTrimmed);
    // Per micro-batch: micro-batches of 2 need smaller pass buffers.
    expect(estimateTrainingBytes(shape({ cortPromptTokens: 80, microBatch: 2 })).passes).toBeLessThan(cort.passes);
  });

  it('guided rollouts: the update trains N + E rows, and their sampling and re-scoring are counted', () => {
    const guided = shape({ guided: { sequences: 8, promptTokens: 120 } });
    // The update is exactly that of a batch of 16 sequences.
    expect(updateBuffers(guided)).toEqual(updateBuffers(shape({ numGenerations: 8 })));
    const plain = estimateTrainingBytes(shape({}));
    const e = estimateTrainingBytes(guided);
    expect(e.passes).toBeGreaterThan(0);
    // Their generate() call has a KV cache of 8 × (120 + 16) positions: larger than the natural one's.
    expect(e.kvCache).toBeGreaterThan(plain.kvCache);
    expect(e.total).toBeGreaterThan(plain.total + e.passes);
    expect(() => estimateTrainingBytes(shape({ guided: { sequences: 8, promptTokens: 250 } }))).toThrow(/guided prompts of 250 tokens/);
  });

  it('bounds: rows per step and the longest guided prompt', () => {
    const cfg = parseGrpoConfig({ num_generations: 4, generation_batch_size: 8, max_completion_length: 10, herl_fraction: 0.5, guidance_on_demand: true, guidance_num_generations: 3 });
    expect(guidedRowsBound(cfg)).toBe(2 * (2 + 3));
    expect(guidedRowsBound(parseGrpoConfig({}))).toBe(0);
    expect(guidedPromptBound(['hi', 'hello'], RUBRIC.criteria, cfg)).toBe('hello' + revisionGuidance('x'.repeat(10), RUBRIC.criteria));
    expect(guidedPromptBound(['hi'], RUBRIC.criteria, parseGrpoConfig({}))).toBeNull();
  });

  it('the plan shown before training counts CoRT and the guided rollouts', () => {
    const base = { num_generations: 4, generation_batch_size: 8, max_completion_length: 16 };
    const prompts = ['Describe the sea.'];
    const plain = planMemory(hf, prompts, parseGrpoConfig(base), limits, undefined, RUBRIC.criteria);
    const cort = planMemory(hf, prompts, parseGrpoConfig({ ...base, cort_credit: true }), limits, undefined, RUBRIC.criteria);
    const guided = planMemory(hf, prompts, parseGrpoConfig({ ...base, herl_fraction: 0.5, guidance_on_demand: true }), limits, undefined, RUBRIC.criteria);
    expect(plain.estimate.passes).toBe(0);
    expect(cort.estimate.passes).toBeGreaterThan(0);
    expect(cort.estimate.total).toBeGreaterThan(plain.estimate.total);
    expect(guided.estimate.passes).toBeGreaterThan(0);
    expect(guided.estimate.total).toBeGreaterThan(cort.estimate.total - cort.estimate.passes);
    // Their generate() call samples from revision prompts up to the context (about 240 tokens here).
    expect(guided.estimate.kvCache).toBeGreaterThan(plain.estimate.kvCache);
    expect(guided.estimate.total).toBeGreaterThan(plain.estimate.total + guided.estimate.passes);
    // Guidance longer than the context is shortened at the step, so the plan never refuses it: its bound stops at the context.
    const long = (n: number) => parseRubric({ name: 'long', criteria: [{ id: 'a', text: 'x'.repeat(n), weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['x'] } }] }).criteria;
    const on = parseGrpoConfig({ ...base, herl_fraction: 0.5, guidance_on_demand: true });
    expect(planMemory(hf, prompts, on, limits, undefined, long(400)).estimate.total).toBe(planMemory(hf, prompts, on, limits, undefined, long(800)).estimate.total);
  });
});
