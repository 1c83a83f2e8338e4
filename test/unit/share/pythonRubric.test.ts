// The exported Python reward module against the TypeScript judge, on the shared vectors in
// test/fixtures/rubric_vectors.json: the fixture must be what the TypeScript code computes now
// (UPDATE_VECTORS=1 rewrites it), and plain python3 must reproduce every status, score, reward
// and GDPO cell (scripts/check_python_rubric.py; judge criteria through a local stand-in endpoint).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIRST_VISIT } from '../../../src/share/presets';
import { exportToTrl, rubricRewardModule, rubricRewardSpec } from '../../../src/share/trlExport';
import { buildVectors, formatVectors, VECTORS_FORMAT, type Vectors } from './rubricVectors';

const FIXTURE = 'test/fixtures/rubric_vectors.json';
const PYTHON = spawnSync('python3', ['--version'], { encoding: 'utf8' }).status === 0;
if (!PYTHON) console.warn('python3 was not found: the Python rubric checks are skipped (they run wherever python3 is installed, as on CI)');

const dir = mkdtempSync(join(tmpdir(), 'rubric-python-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function python(args: string[], input?: string) {
  const out = spawnSync('python3', args, { encoding: 'utf8', input, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, timeout: 60_000 });
  return { status: out.status, stdout: out.stdout, stderr: out.stderr };
}

describe('shared rubric vectors', () => {
  let vectors: Vectors;

  it('the fixture holds what the TypeScript judge and aggregations compute now', async () => {
    vectors = await buildVectors();
    const fresh = JSON.parse(JSON.stringify(vectors));
    if (process.env.UPDATE_VECTORS) writeFileSync(FIXTURE, formatVectors(vectors));
    const stored = JSON.parse(readFileSync(FIXTURE, 'utf8'));
    expect(stored.format).toBe(VECTORS_FORMAT);
    expect(stored).toEqual(fresh);
  });

  it('cover every status, rule kind and aggregation, with rewards that differ', () => {
    const kinds = new Set(vectors.cases.flatMap((c) => c.spec.reward.criteria.flatMap((k) => ('rule' in k ? [k.rule.kind] : []))));
    expect([...kinds].sort()).toEqual(['all_caps', 'contains', 'count', 'ends_with', 'json', 'length', 'no_caps', 'not_contains', 'regex', 'starts_with']);
    const methods = new Set(vectors.cases.map((c) => c.spec.reward.aggregation.method));
    expect([...methods].sort()).toEqual([
      'adaptive_weights',
      'correlation_weights',
      'essential_gated',
      'fork_precision_recall',
      'healthbench_points',
      'rubric_dropout',
      'strict_all_required',
      'weighted_mean',
    ]);
    const scores = vectors.cases.flatMap((c) => c.expected.scores.flat());
    expect(scores.filter((s) => s === 1).length).toBeGreaterThan(100);
    expect(scores.filter((s) => s === 0).length).toBeGreaterThan(100);
    expect(scores).toContain(0.5); // an ordinal judge answer
    expect(scores.filter((s) => s === null).length).toBeGreaterThan(5);
    const rewards = vectors.cases.flatMap((c) => c.expected.rewards);
    expect(rewards).toContain(null);
    expect(new Set(rewards.filter((r) => r !== null)).size).toBeGreaterThan(20);
    expect(vectors.cases.filter((c) => c.expected.cells).length).toBe(2);
  });

  it.skipIf(!PYTHON)('plain python3 reproduces every criterion score, reward and cell', () => {
    const module = join(dir, 'rubric_reward.py');
    // Any case's spec will do: the check builds one RubricReward per case from the vectors.
    writeFileSync(module, rubricRewardModule(vectors.cases[0].spec));
    const out = python(['scripts/check_python_rubric.py', module, FIXTURE]);
    expect(out.stderr).toBe('');
    const report = JSON.parse(out.stdout);
    expect(report.judge_problems).toEqual([]);
    expect(report.mismatches).toEqual([]);
    expect(report.checked).toBeGreaterThan(3000);
    expect(report.judge_requests).toBeGreaterThan(40);
    expect(out.status).toBe(0);
  });

  it.skipIf(!PYTHON)('the check fails when the Python side disagrees', () => {
    const module = join(dir, 'broken_reward.py');
    // A plausible bug: the regex flags (i, m, s) dropped. The regex vectors must catch it.
    const broken = rubricRewardModule(vectors.cases[0].spec).replace('flags |= _PY_FLAGS[f]', 'flags |= 0');
    expect(broken).not.toBe(rubricRewardModule(vectors.cases[0].spec));
    writeFileSync(module, broken);
    const out = python(['scripts/check_python_rubric.py', module, FIXTURE]);
    expect(out.status).toBe(1);
    expect(JSON.parse(out.stdout).mismatch_count).toBeGreaterThan(0);
  });
});

describe('the exported reward module on its own', () => {
  it.skipIf(!PYTHON)('scores JSON lines from stdin with no packages and no judge settings', async () => {
    const { files } = await exportToTrl(FIRST_VISIT.experiment);
    const module = join(dir, 'first_visit_reward.py');
    writeFileSync(module, files['rubric_reward.py']);
    const lines = ['What a lovely sea, do you like it?', 'THE SEA IS BIG', 'The sea is a large body of salt water that covers most of the planet and many more words right here.']
      .map((completion) => JSON.stringify({ prompt: 'Describe the sea.', completion }))
      .join('\n');
    const out = python(['-I', '-S', module], lines);
    expect(out.stderr).toBe('');
    const rows = out.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.map((r) => r.reward)).toEqual([4 / 4, 2 / 4 - 1 / 4, 0]);
    expect(rows[0].criteria.map((c: { criterion_id: string }) => c.criterion_id)).toEqual(['short', 'asks', 'you', 'no_caps_shouting']);
  });

  it.skipIf(!PYTHON)('the TRL entry points: keyword calls, chat completions, trainer_state, per-criterion functions', async () => {
    const experiment = {
      ...FIRST_VISIT.experiment,
      held_out_rubric: { name: 'clean', criteria: [{ id: 'tiny', text: 'at most 3 words', weight: 1, tier: 'essential', rule: { kind: 'length', unit: 'words', max: 3 } }] },
      config: { ...FIRST_VISIT.experiment.config, num_generations: 2, generation_batch_size: 4, multi_objective_aggregation: 'normalize_then_sum', reward_aggregation: { method: 'rubric_dropout', dropout_p: 0.5 } },
    };
    const module = join(dir, 'entry_points.py');
    writeFileSync(module, rubricRewardModule(await rubricRewardSpec(experiment)));
    const program = `
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("m", sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
class State: global_step = 5
prompts = [[{"role": "user", "content": "Describe the sea."}]] * 4
texts = ["Do you like it?", "THE SEA", "The sea is big.", "You know the sea, right?"]
completions = [[{"role": "assistant", "content": t}] for t in texts]
funcs = m.criterion_reward_funcs()
columns = [f(prompts=prompts, completions=completions, completion_ids=[[1]] * 4, trainer_state=State()) for f in funcs]
print(json.dumps({
  "names": [f.__name__ for f in funcs],
  "weights": m.criterion_reward_weights(),
  "columns": columns,
  "cells": m.CriterionRewards(m.RubricReward(m.SPEC)).cells(prompts, completions, step=5),
  "rewards": m.rubric_reward(prompts=prompts, completions=completions, trainer_state=State()),
  "plain": m.RubricReward(m.SPEC).rewards([p[0]["content"] for p in prompts], texts, step=5),
  "held_out": m.held_out_reward(prompts=prompts, completions=completions),
}))`;
    const out = python(['-c', program, module]);
    expect(out.stderr).toBe('');
    const r = JSON.parse(out.stdout);
    expect(r.names).toEqual(['criterion_short', 'criterion_asks', 'criterion_you', 'criterion_no_caps_shouting']);
    expect(r.weights).toEqual([0.5, 0.25, 0.25, -0.25]);
    expect(r.columns).toEqual(r.cells[0].map((_: unknown, k: number) => r.cells.map((row: unknown[]) => row[k])));
    expect(r.rewards).toEqual(r.plain);
    expect(r.held_out).toEqual([0, 1, 0, 0]);
  });

  it.skipIf(!PYTHON)('a judge criterion without endpoint settings is unscorable with a message naming the variables', async () => {
    const experiment = {
      ...FIRST_VISIT.experiment,
      rubric: { name: 'q', criteria: [{ id: 'ok', text: 'fine', weight: 1, tier: 'essential', judge_question: 'Is it fine?' }] },
    };
    const module = join(dir, 'judge_reward.py');
    writeFileSync(module, rubricRewardModule(await rubricRewardSpec(experiment)));
    const env = { ...process.env, RUBRIC_JUDGE_URL: '', RUBRIC_JUDGE_MODEL: '' };
    const out = spawnSync('python3', ['-I', module], { encoding: 'utf8', input: '{"prompt": "p", "completion": "c"}\n', env });
    const row = JSON.parse(out.stdout);
    expect(row.reward).toBeNull();
    expect(row.criteria[0].status).toBe('unscorable');
    expect(row.criteria[0].reason).toMatch(/set RUBRIC_JUDGE_URL and RUBRIC_JUDGE_MODEL/);
  });
});
