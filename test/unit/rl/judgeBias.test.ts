// The experiment's judge_bias: validated with zod, carried by share links and run-file
// experiments, refused with a clear message when it carries a key or names unknown criteria.
import { describe, expect, it } from 'vitest';
import { parseExperiment } from '../../../src/rl/experiment';
import { experimentProblems } from '../../../src/rl/issueLabels';
import { BIAS_CHOICE_KINDS } from '../../../src/rl/judgeBias';
import { BIAS_KINDS } from '../../../src/rubric/bias';
import { decodeShareLink, encodeShareLink } from '../../../src/share/link';
import { FIRST_VISIT } from '../../../src/share/presets';
import { readRunFile, runFileJson } from '../../../src/share/runFile';
import type { RolloutRecord } from '../../../src/rl/grpoStep';
import { exportToTrl } from '../../../src/share/trlExport';

const base = {
  model: 'embedded/tiny-gpt2-byte',
  prompts: ['Say hi.'],
  rubric: { name: 'r', criteria: [{ id: 'polite', text: 'Polite', weight: 1, tier: 'important', judge_question: 'Is the response polite?' }] },
};

function problems(input: Record<string, unknown>): string[] {
  try {
    parseExperiment(input);
  } catch (e) {
    return experimentProblems(e, input) ?? [String(e)];
  }
  return [];
}

describe('experiment judge_bias', () => {
  it('is off unless declared', () => {
    expect(parseExperiment(base).judgeBias).toBeNull();
  });

  it('accepts every kind the wrapper knows', () => {
    expect(BIAS_CHOICE_KINDS).toEqual([...BIAS_KINDS]);
    expect(parseExperiment({ ...base, judge_bias: { kind: 'length', strength: 0.4, target_chars: 120 } }).judgeBias).toEqual({ kind: 'length', strength: 0.4, target_chars: 120 });
    expect(parseExperiment({ ...base, judge_bias: { kind: 'keyword', strength: 1, words: ['delve'], criteria: ['polite'] } }).judgeBias?.kind).toBe('keyword');
    expect(parseExperiment({ ...base, judge_bias: { kind: 'tone', strength: 0.2, seed: 9 } }).judgeBias).toEqual({ kind: 'tone', strength: 0.2, seed: 9 });
    expect(parseExperiment({ ...base, judge_bias: { kind: 'leniency', strength: 0.1 } }).judgeBias?.strength).toBe(0.1);
  });

  it('refuses bad biases naming the field', () => {
    expect(problems({ ...base, judge_bias: { kind: 'position', strength: 0.5, slot: 'middle' } })[0]).toMatch(/^Judge bias slot/);
    expect(problems({ ...base, judge_bias: { kind: 'length', strength: 2 } })[0]).toMatch(/^Judge bias strength/);
    expect(problems({ ...base, judge_bias: { kind: 'keyword', strength: 0.5 } })[0]).toMatch(/^Judge bias words/);
    expect(problems({ ...base, judge_bias: { kind: 'keyword', strength: 0.5, words: [] } })[0]).toMatch(/needs at least one word/);
    expect(problems({ ...base, judge_bias: { kind: 'tone', strength: 0.5, words: ['x'] } })[0]).toMatch(/^Judge bias/);
    expect(problems({ ...base, judge_bias: { kind: 'tone', strength: 0.5, criteria: ['nope'] } })).toEqual(['Judge bias criteria: names criteria the rubric does not have: "nope"']);
  });

  it('refuses key-like fields', () => {
    for (const field of ['api_key', 'apiKey', 'token', 'secret']) {
      expect(() => parseExperiment({ ...base, judge_bias: { kind: 'tone', strength: 0.5, [field]: 'sk-1' } })).toThrow(new RegExp(`judge_bias: "${field}" is not allowed`));
    }
  });

  it('travels in a share link', () => {
    const judge_bias = { kind: 'keyword' as const, strength: 0.7, words: ['delve', 'tapestry'], seed: 3 };
    const link = encodeShareLink({ experiment: { ...base, config: {}, judge_bias } });
    expect(decodeShareLink(link).experiment.judge_bias).toEqual(judge_bias);
    expect(decodeShareLink(encodeShareLink({ experiment: { ...base, config: {} } })).experiment.judge_bias).toBeUndefined();
  });

  it('travels in a run file, with the verdicts it changed marked', async () => {
    const experiment = { ...structuredClone(FIRST_VISIT.experiment), judge_bias: { kind: 'length' as const, strength: 0.4 } };
    const id = (experiment.rubric as { criteria: { id: string }[] }).criteria[0].id;
    const rollout = {
      step: 0, group: 0, index: 0, prompt: 'p', completion: 'c', completion_ids: [1], logprobs: [-1], truncated: false,
      results: [{ criterion_id: id, status: 'ok', score: 1, reason: 'no [biased: length +1]', biased: true }],
      scores: [1], reward: 1, advantage: 0,
    } as unknown as RolloutRecord;
    const back = await readRunFile(await runFileJson({ name: 'b', exported_at: '2025-01-02T03:04:05.000Z', experiment, metrics: [], rollouts: [rollout] }));
    expect(back.experiment.judge_bias).toEqual({ kind: 'length', strength: 0.4 });
    expect(back.rollouts[0].results[0]).toEqual(rollout.results[0]);
    // biased is only ever true: anything else is refused.
    const bad = { ...rollout, results: [{ ...rollout.results[0], biased: 'yes' }] } as unknown as RolloutRecord;
    await expect(readRunFile(await runFileJson({ name: 'b', exported_at: '2025-01-02T03:04:05.000Z', experiment, metrics: [], rollouts: [bad] }))).rejects.toThrow(/the run file is invalid:\nrollouts\[0\]/);
  });

  it('the TRL export says it does not export the bias', async () => {
    const experiment = { ...structuredClone(FIRST_VISIT.experiment), judge_bias: { kind: 'tone' as const, strength: 0.3 } };
    const { notes, files } = await exportToTrl(experiment);
    expect(notes).toContain("judge_bias (the page's bias sandbox, tone ×0.3) is not exported: the exported reward is the unbiased rubric");
    expect(files['README.md']).toContain('judge_bias');
    expect((await exportToTrl(FIRST_VISIT.experiment)).notes.join('\n')).not.toMatch(/judge_bias/);
  });
});
