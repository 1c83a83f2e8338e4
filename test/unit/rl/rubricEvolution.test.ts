// The trainer's evolution call (src/rl/rubricEvolution.ts) on a context without a GPU: the step's
// version and decision in its metrics, the switch of the context's rubric, the judge generator,
// and the evolved rubric through a checkpoint's trainer_state.json.
import { describe, expect, it } from 'vitest';
import { parseGrpoConfig } from '../../../src/rl/config';
import type { GrpoContext, RolloutRecord, StepResult } from '../../../src/rl/grpoStep';
import { evolutionCheckpointFields, evolveAfterStep, judgeGenerator, resumedEvolvedRubric } from '../../../src/rl/rubricEvolution';
import { parseRubric, rubricVersion } from '../../../src/rubric';
import type { CheckpointFiles } from '../../../src/model/checkpoint';
import { engineJudge } from '../../../src/rl/judgeFactory';
import { workerJudge } from '../../../src/worker/workerJudge';

const RUBRIC = parseRubric({
  name: 'r',
  criteria: [
    { id: 'short', text: 'At most 3 words', weight: 1, tier: 'important', rule: { kind: 'length', unit: 'words', max: 3 } },
    { id: 'moon', text: 'Mentions the moon', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['moon'] } },
  ],
});

async function context(evolution: string): Promise<GrpoContext> {
  return { rubric: RUBRIC, rubricVersion: await rubricVersion(RUBRIC), config: parseGrpoConfig({ num_generations: 2, generation_batch_size: 4, rubric_evolution: evolution, rubric_evolution_every: 1, rubric_evolution_window: 1 }) } as unknown as GrpoContext;
}

/** 'short' is met by every completion; 'moon' splits both groups. */
function step(n: number): StepResult {
  const rollouts = ['moon', 'sun', 'moon', 'sun'].map(
    (completion, i): RolloutRecord =>
      ({ step: n, group: i >> 1, index: i & 1, prompt: `p${i >> 1}`, completion, scores: [1, completion === 'moon' ? 1 : 0], results: [], reward: 0, advantage: 0 }) as unknown as RolloutRecord,
  );
  return { metrics: { step: n } as StepResult['metrics'], rollouts };
}

describe('evolveAfterStep', () => {
  it('does nothing with rubric_evolution off', async () => {
    const ctx = await context('off');
    const r = step(0);
    await evolveAfterStep(ctx, 0, r);
    expect(r.metrics.rubric_version).toBeUndefined();
    expect(r.metrics.rubric_evolution).toBeUndefined();
    expect(ctx.rubric).toBe(RUBRIC);
  });
  it('prune: the step records its version and the decision; the next step uses the new version', async () => {
    const ctx = await context('prune');
    const start = ctx.rubricVersion;
    const first = step(0);
    await evolveAfterStep(ctx, 0, first);
    expect(first.metrics.rubric_version).toBe(start);
    expect(first.metrics.rubric_evolution).toMatchObject({ outcome: 'accepted', parent: start, removed: ['short'] });
    expect(ctx.rubric.criteria.map((c) => c.id)).toEqual(['moon']);
    expect(ctx.rubricVersion).toBe(first.metrics.rubric_evolution!.version);
    // The next step was judged with the new version: its scores have one criterion.
    const second = step(1);
    second.rollouts.forEach((r) => (r.scores = [r.scores[1]]));
    await evolveAfterStep(ctx, 1, second);
    expect(second.metrics.rubric_version).toBe(ctx.rubricVersion);
    expect(second.metrics.rubric_evolution).toMatchObject({ outcome: 'unchanged', reason: expect.stringMatching(/nothing to prune/) });
  });
  it('the evolved rubric travels through a checkpoint and is checked on resume', async () => {
    const ctx = await context('prune');
    await evolveAfterStep(ctx, 0, step(0));
    const state = { global_step: 1, seed: 1, ...evolutionCheckpointFields(ctx) };
    const files = { 'trainer_state.json': JSON.stringify(state) } as CheckpointFiles;
    expect(await resumedEvolvedRubric(files)).toEqual({ version: ctx.rubricVersion, rubric: ctx.rubric });
    expect(await resumedEvolvedRubric({ 'trainer_state.json': JSON.stringify({ global_step: 1, seed: 1 }) } as CheckpointFiles)).toBeNull();
    const tampered = { ...state, evolved_rubric: { ...state.evolved_rubric!, rubric: RUBRIC } };
    await expect(resumedEvolvedRubric({ 'trainer_state.json': JSON.stringify(tampered) } as CheckpointFiles)).rejects.toThrow(/does not match its version/);
  });
});

describe('judgeGenerator', () => {
  it('uses a judge\'s text endpoint when it has one, else none', async () => {
    const remote = { name: 'remote', judge: async () => [], complete: async function (this: { name: string }, m: { user: string }) { return `${this.name}:${m.user}`; } };
    const gen = judgeGenerator(remote as never)!;
    expect(await gen({ system: 's', user: 'u' })).toBe('remote:u');
    expect(judgeGenerator({ judge: async () => [] } as never)).toBeNull();
    expect(judgeGenerator(undefined)).toBeNull();
  });

  it('uses a judge worker\'s model when the worker can write text: the reply\'s text, the request passed on', async () => {
    const asked: unknown[] = [];
    const client = {
      judgeQuestions: async () => [],
      complete: async (messages: { system: string; user: string }) => {
        asked.push(messages);
        return { text: `{"criteria": []} (${messages.user})`, promptTokens: 9, keptPromptTokens: 9, contextLength: 256, replyTokens: 4, maxReplyTokens: 128, truncated: false, seconds: 0 };
      },
    };
    const gen = judgeGenerator(workerJudge(client, 'model:m'))!;
    expect(await gen({ system: 's', user: 'u' })).toBe('{"criteria": []} (u)');
    expect(asked).toEqual([{ system: 's', user: 'u' }]);
    // A worker client without complete (older tests' fakes) gives no writer.
    expect(judgeGenerator(workerJudge({ judgeQuestions: async () => [] }, 'model:m'))).toBeNull();
  });

  it('an engine judge (self, or a model loaded here) is a writer too', () => {
    const loaded = { model: { config: { maxPositions: 256 } }, tokenizer: { eosTokenId: 1, decode: () => '' }, formatPrompt: () => [0] };
    expect(judgeGenerator(engineJudge(loaded as never, 'self'))).not.toBeNull();
  });
});
