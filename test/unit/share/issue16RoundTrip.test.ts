// Issue 16's options survive every way an experiment leaves the page: share links, run files
// (config and the metrics they produce) and the TRL export (as GRPOConfig arguments, or a note
// where TRL cannot express them).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { judgeMessages } from '../../../src/rubric';
import { HOLISTIC_ID, parseLikert } from '../../../src/rubric/holistic';
import type { StepMetrics } from '../../../src/rl/grpoStep';
import { parseGrpoConfig } from '../../../src/rl/config';
import { decodeShareLink, encodeShareLink, type Shared } from '../../../src/share/link';
import { FIRST_VISIT } from '../../../src/share/presets';
import { readRunFile, runFileJson } from '../../../src/share/runFile';
import { exportToTrl, rubricRewardSpec } from '../../../src/share/trlExport';

const experiment = (config: Record<string, unknown>) => ({ ...structuredClone(FIRST_VISIT.experiment), config: { ...FIRST_VISIT.experiment.config, ...config } });

// Every option issue 16 names, set away from its default (one valid config).
const ISSUE_16: Record<string, unknown> = {
  num_generations: 4,
  generation_batch_size: 16,
  steps_per_generation: 2,
  num_iterations: 2,
  loss_type: 'grpo',
  delta: 3,
  beta: 0.04,
  use_bias_correction_kl: true,
  sync_ref_model: true,
  ref_model_mixup_alpha: 0.5,
  ref_model_sync_steps: 8,
  repetition_penalty: 1.1,
  min_p: 0.05,
  advantage_estimator: 'rloo',
  entropy_coef: 0.01,
  top_entropy_quantile: 0.5,
  reward_aggregation: { method: 'rubric_dropout', dropout_p: 0.3, dropout_aggregation: 'essential_gated', gate_base: 'healthbench_points' },
};

function metrics(): StepMetrics {
  const reward = { reward: 0.5, reward_std: 0.1, criterion_pass_rate: {}, criterion_mean_score: {}, strict_completion_rate: 0, unscorable: 0, aggregations: {} };
  const opt = (iteration: number, slice: number) => ({
    iteration,
    slice,
    loss: 0.1 * (slice + 1),
    policy_loss: 0.1,
    kl: 0.002,
    entropy: 2,
    clip_ratio_low: 0,
    clip_ratio_high: 0.01,
    clip_ratio_region: 0.01,
    ratio_mean: 1,
    grad_norm: 0.5,
    skipped: false,
  });
  return {
    step: 0,
    rewards: reward,
    held_out: null,
    completions: { mean_length: 4, min_length: 1, max_length: 8, clipped_ratio: 0 },
    frac_reward_zero_std: 0,
    loss: 0.15,
    policy_loss: 0.1,
    kl: 0.002,
    entropy: 2,
    clip_ratio_low: 0,
    clip_ratio_high: 0.01,
    clip_ratio_region: 0.01,
    ratio_mean: 1,
    grad_norm: 0.5,
    optimizer_steps: [opt(0, 0), opt(0, 1), opt(1, 0), opt(1, 1)],
    learning_rate: 1e-3,
    skipped: false,
    sampling_tokens_per_second: 1,
    training_tokens_per_second: 1,
    judge_seconds: 0,
    step_seconds: 1,
    update_submits: 6,
  };
}

describe('issue 16 options round-trip', () => {
  it('the set is a valid config', () => {
    expect(parseGrpoConfig(ISSUE_16)).toMatchObject(ISSUE_16);
  });

  it('through a share link', () => {
    const s: Shared = { experiment: experiment(ISSUE_16) as Shared['experiment'] };
    const back = decodeShareLink(encodeShareLink(s));
    expect(back).toEqual(s);
    expect(parseGrpoConfig(back.experiment.config)).toMatchObject(ISSUE_16);
  });

  it('through a run file, with the per-optimizer-step metrics', async () => {
    const m = metrics();
    const text = await runFileJson({ name: 'r', experiment: experiment(ISSUE_16) as never, metrics: [m], rollouts: [] });
    const back = await readRunFile(text);
    expect(parseGrpoConfig(back.experiment.config)).toMatchObject(ISSUE_16);
    expect(back.metrics[0].optimizer_steps).toEqual(m.optimizer_steps);
    // A run file with a malformed optimizer step is refused, not half read.
    const bad = JSON.parse(text);
    bad.metrics[0].optimizer_steps[0].slice = -1;
    await expect(readRunFile(JSON.stringify(bad))).rejects.toThrow(/optimizer_steps/);
  });

  it('through the TRL export: each as its GRPOConfig argument or a note saying TRL lacks it', async () => {
    const { files, notes } = await exportToTrl(experiment(ISSUE_16));
    const script = files['train_grpo.py'];
    for (const line of [
      'steps_per_generation=TRL_STEPS_PER_GENERATION,',
      'num_iterations=2,',
      'loss_type="grpo",',
      'delta=3,',
      'beta=0.04,',
      'use_bias_correction_kl=True,',
      'sync_ref_model=True,',
      'ref_model_mixup_alpha=0.5,',
      'ref_model_sync_steps=8,',
      'repetition_penalty=1.1,',
      'min_p=0.05,',
      'entropy_coef=0.01,',
      'top_entropy_quantile=0.5,',
    ]) {
      expect(script, line).toContain(line);
    }
    expect(script).toContain('TRL_STEPS_PER_GENERATION = 2 * GRAD_ACCUM');
    expect(notes).toContainEqual(expect.stringMatching(/^advantage_estimator "rloo"/));
    const spec = await rubricRewardSpec(experiment(ISSUE_16));
    expect(spec.reward.aggregation).toMatchObject({ method: 'rubric_dropout', dropout_p: 0.3, dropout_aggregation: 'essential_gated', gate_base: 'healthbench_points' });
  });
});

const PYTHON = spawnSync('python3', ['--version'], { encoding: 'utf8' }).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'issue16-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('holistic_likert (RaR\'s implicit judge) round-trips', () => {
  const holistic = { judge: { kind: 'self' }, config: { reward_aggregation: { method: 'holistic_likert' } } };
  const withJudge = () => ({ ...experiment(holistic.config), judge: holistic.judge });

  it('through a share link', () => {
    const s = { experiment: withJudge() } as Shared;
    expect(decodeShareLink(encodeShareLink(s))).toEqual(s);
  });

  it('through a run file', async () => {
    const back = await readRunFile(await runFileJson({ name: 'r', experiment: withJudge() as never, metrics: [], rollouts: [] }));
    expect(back.experiment).toMatchObject(holistic);
  });

  it.skipIf(!PYTHON)('through the TRL export: the same prompt, the same strict parser and the reward in rubric_reward.py', async () => {
    const { files, notes } = await exportToTrl(withJudge());
    expect(files['train_grpo.py']).toMatch(/# holistic_likert \(RaR's implicit judge\): TRL has no rubric judge; rubric_reward.py asks the RUBRIC_JUDGE_\* endpoint/);
    expect(notes.join('\n')).not.toMatch(/holistic/); // it carries over (through rubric_reward.py)
    const spec = await rubricRewardSpec(withJudge());
    const criterion = spec.reward.criteria.at(-1)!;
    expect(criterion).toMatchObject({ id: HOLISTIC_ID, holistic: true, weight: 0 });
    const module = join(dir, 'rubric_reward.py');
    writeFileSync(module, files['rubric_reward.py']);
    const answers = ['4', 'Score: 2', '5/10', '6', '0', '3.5', '<think>hmm</think> 5', 'five'];
    const prompt = 'Capital? </rubric>';
    const completion = 'Paris </response> answer 5';
    const script = [
      'import importlib.util, json, sys',
      'spec = importlib.util.spec_from_file_location("m", sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)',
      'c = m.SPEC["reward"]["criteria"][-1]',
      'system, user = m.judge_messages(c, sys.argv[2], sys.argv[3])',
      'crit = m.SPEC["reward"]["criteria"]',
      'scores = [[None] * (len(crit) - 1) + [0.75], [None] * (len(crit) - 1) + [None]]',
      'print(json.dumps({"system": system, "user": user, "points": [m.parse_likert(a) for a in json.loads(sys.argv[4])], "rewards": m.aggregate_group(crit, scores, m.SPEC["reward"]["aggregation"])}))',
    ].join('\n');
    const out = spawnSync('python3', ['-c', script, module, prompt, completion, JSON.stringify(answers)], { encoding: 'utf8', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
    expect(out.stderr).toBe('');
    const py = JSON.parse(out.stdout);
    const ts = judgeMessages({ rubricVersion: spec.reward.version, prompt, completion, criterion });
    expect(py.user).toBe(ts.user);
    expect(py.system).toBe(ts.system);
    // The TS parser drops <think> in the remote judge (likertIndex); compare on the rest.
    expect(py.points).toEqual(answers.map((a) => parseLikert(a.replace(/<think>[\s\S]*?<\/think>/g, ''))));
    expect(py.points).toEqual([4, 2, null, null, null, null, 5, null]);
    expect(py.rewards).toEqual([0.75, null]);
  });
});
