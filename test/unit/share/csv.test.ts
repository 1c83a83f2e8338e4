// CSV: quoting that survives a strict RFC 4180 reader, flattened metric columns, and rollouts
// whose text cannot run as a spreadsheet formula.
import { describe, expect, it } from 'vitest';
import type { RolloutRecord, StepMetrics } from '../../../src/rl/grpoStep';
import { csvField, metricColumns, metricsToCsv, neutraliseFormula, rolloutsToCsv, toCsv } from '../../../src/share/csv';

/** A strict RFC 4180 reader (CRLF records; quoted fields may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r') {
        if (text[i] === '"' || text[i] === '\n') throw new Error(`bare ${JSON.stringify(text[i])} in an unquoted field at ${i}`);
        field += text[i++];
      }
    }
    row.push(field);
    if (text[i] === ',') i++;
    else if (text.startsWith('\r\n', i)) {
      rows.push(row);
      row = [];
      i += 2;
    } else throw new Error(`expected "," or CRLF at ${i}`);
  }
  if (row.length) throw new Error('last record has no CRLF');
  return rows;
}

function metrics(step: number, passRate: Record<string, number | null>, heldOut = false): StepMetrics {
  const rewards = {
    reward: step === 1 ? null : 0.5,
    reward_std: 0.1,
    criterion_pass_rate: passRate,
    criterion_mean_score: passRate,
    strict_completion_rate: 0.25,
    unscorable: 0,
    aggregations: { weighted_mean: 0.5, healthbench_points: 0.25 },
  };
  return {
    step,
    rewards,
    held_out: heldOut ? { ...rewards, reward: 0.125, criterion_pass_rate: { clean: 1 } } : null,
    completions: { mean_length: 10, min_length: 2, max_length: 48, clipped_ratio: 0 },
    frac_reward_zero_std: 0.5,
    loss: step === 2 ? NaN : -0.001,
    policy_loss: -1e-7,
    kl: null,
    entropy: 2.25,
    clip_ratio_low: 0,
    clip_ratio_high: 0.03125,
    clip_ratio_region: 0.03125,
    ratio_mean: 1,
    grad_norm: step === 2 ? Infinity : 0.5,
    learning_rate: 0.0003,
    skipped: step === 2,
    sampling_tokens_per_second: 100,
    training_tokens_per_second: 200,
    judge_seconds: 0,
    step_seconds: 1,
    update_submits: 1,
  };
}

describe('fields', () => {
  it('quotes only when needed, and round-trips through a strict reader', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(' padded')).toBe('" padded"');
    expect(csvField(null)).toBe('');
    expect(csvField(NaN)).toBe('NaN');
    expect(csvField(-Infinity)).toBe('-Infinity');
    expect(csvField(-0.5)).toBe('-0.5');
    expect(csvField(true)).toBe('true');
    const nasty = ['a,b', '"', '""', 'x\r\ny', '\n', 'caf\u00e9 \ud83c\udf0a', '', ' ', '=1+1'];
    expect(parseCsv(toCsv(['h1', 'h2'], nasty.map((s) => [s, 'z'])))).toEqual([['h1', 'h2'], ...nasty.map((s) => [s, 'z'])]);
  });

  it('refuses rows of the wrong width', () => {
    expect(() => toCsv(['a', 'b'], [['1']])).toThrow(/row 0 has 1 fields for 2 columns/);
  });

  it('neutralises formulas in text', () => {
    expect(['=HYPERLINK("x")', '+1', '-2', '@SUM(A1)', '\tx', 'safe', ''].map(neutraliseFormula)).toEqual(["'=HYPERLINK(\"x\")", "'+1", "'-2", "'@SUM(A1)", "'\tx", 'safe', '']);
  });
});

describe('metrics', () => {
  const steps = [metrics(0, { short: 0.5, asks: 0.25 }), metrics(1, { short: 0.75 }, true), metrics(2, { short: 1, new_one: 0 })];

  it('flattens into TRL-style columns, with the union of criteria over the steps', () => {
    const columns = metricColumns(steps);
    expect(columns.slice(0, 5)).toEqual(['step', 'reward', 'reward_std', 'strict_completion_rate', 'unscorable']);
    for (const c of ['pass_rate/short', 'pass_rate/asks', 'pass_rate/new_one', 'mean_score/short', 'reward/weighted_mean', 'reward/healthbench_points', 'frac_reward_zero_std', 'kl', 'entropy', 'clip_ratio_low', 'clip_ratio_high', 'clip_ratio_region', 'grad_norm', 'completions/mean_length', 'completions/clipped_ratio', 'held_out/reward', 'held_out/pass_rate/clean']) {
      expect(columns).toContain(c);
    }
    expect(new Set(columns).size).toBe(columns.length);
    expect(metricColumns([steps[0]])).not.toContain('held_out/reward');
  });

  it('writes one row per step: missing values empty, non-finite numbers spelled out', () => {
    const rows = parseCsv(metricsToCsv(steps));
    const [header, ...data] = rows;
    expect(data.length).toBe(3);
    const col = (name: string) => data.map((r) => r[header.indexOf(name)]);
    expect(col('step')).toEqual(['0', '1', '2']);
    expect(col('reward')).toEqual(['0.5', '', '0.5']);
    expect(col('pass_rate/asks')).toEqual(['0.25', '', '']);
    expect(col('pass_rate/new_one')).toEqual(['', '', '0']);
    expect(col('loss')).toEqual(['-0.001', '-0.001', 'NaN']);
    expect(col('grad_norm')).toEqual(['0.5', '0.5', 'Infinity']);
    expect(col('policy_loss')).toEqual(['-1e-7', '-1e-7', '-1e-7']);
    expect(col('kl')).toEqual(['', '', '']);
    expect(col('skipped')).toEqual(['false', 'false', 'true']);
    expect(col('held_out/reward')).toEqual(['', '0.125', '']);
    expect(col('held_out/pass_rate/clean')).toEqual(['', '1', '']);
    expect(col('clip_ratio_high')).toEqual(['0.03125', '0.03125', '0.03125']);
    expect(data.every((r) => r.length === header.length)).toBe(true);
  });

  it('an empty run is a header of the fixed columns', () => {
    expect(parseCsv(metricsToCsv([]))).toEqual([metricColumns([])]);
  });
});

describe('rollouts', () => {
  it('one row per rollout, scores by criterion, text as data', () => {
    const r: RolloutRecord = {
      step: 3,
      group: 1,
      index: 2,
      prompt: 'Say "hi", then stop.',
      completion: '=cmd|"/C calc"!A0\nsecond line',
      completion_ids: [5, 6, 7, 8],
      logprobs: [-1, -1, -1, -1],
      truncated: true,
      results: [
        { criterion_id: 'short', status: 'ok', score: 1, reason: 'ok' },
        { criterion_id: 'asks', status: 'unscorable', score: null, reason: 'x' },
      ],
      scores: [1, null],
      reward: null,
      advantage: 0,
    };
    const rows = parseCsv(rolloutsToCsv([r]));
    expect(rows[0]).toEqual(['step', 'group', 'index', 'prompt', 'completion', 'completion_tokens', 'truncated', 'guided', 'guidance', 'reward', 'advantage', 'score/short', 'score/asks']);
    expect(rows[1]).toEqual(['3', '1', '2', 'Say "hi", then stop.', '\'=cmd|"/C calc"!A0\nsecond line', '4', 'true', '', '', '', '0', '1', '']);
    // A guided rollout (src/rl/explore) names its strategy and its guidance, formula-neutralised.
    const guided = parseCsv(rolloutsToCsv([{ ...r, guided: { kind: 'scaffold', guidance: '=SUM(A1)\n- Be brief', criteria: ['short'] } }]));
    expect(guided[1].slice(7, 9)).toEqual(['scaffold', '\'=SUM(A1)\n- Be brief']);
  });
});
