// Pure side of scripts/experiments/methods.mjs: the methods it compares, the experiment each run
// trains, one run's record from the trainer's per-step metrics and last rollouts, and the
// per-method summary (mean ± spread over seeds) as JSON rows and a markdown table. No browser, no
// files: test/unit/experiments/summarize.test.ts checks it.

/**
 * Each method is plain GRPO plus these config options (src/rl/config.ts; only non-defaults, so the
 * unit test can check nothing else differs): entropy_pivot_boost stays 2, scaffold_prob_start 1.
 * `baseline` is plain GRPO; every other row is compared with it on the same seeds.
 */
export const METHODS = {
  baseline: {},
  span_credit: { span_credit: 0.5 },
  cort_credit: { cort_credit: true },
  entropy_pivot: { entropy_pivot_quantile: 0.2 },
  credit_schedule: { span_credit: 0.5, credit_schedule: 'linear' },
  cripo_flip: { cripo_flip: true },
  scaffold: { scaffold_fraction: 0.5 },
  dynamic_sampling: { dynamic_sampling: true, max_num_gen_batches: 2 },
  herl: { herl_fraction: 0.5 },
  // A group "fails" at or below the threshold: 0.25 is at most one of the four criteria met (the
  // default 0 would almost never fire on methods.experiment.json's rubric).
  rise_on_demand: { guidance_on_demand: true, guidance_fail_threshold: 0.25 },
};

/** What a run compares when --methods is not given (credit_schedule left out for time: it rescales span_credit). */
export const DEFAULT_METHODS = ['baseline', 'span_credit', 'cort_credit', 'entropy_pivot', 'cripo_flip', 'scaffold', 'dynamic_sampling'];

/**
 * The experiment of one run: the base experiment with the method's options and the seed laid over
 * its config. Throws on a method it does not know, naming the ones it does.
 */
export function methodExperiment(base, method, seed, methods = METHODS) {
  const options = methods[method];
  if (!options) throw new Error(`unknown method "${method}"; known: ${Object.keys(methods).join(', ')}`);
  const experiment = structuredClone(base);
  experiment.config = { ...experiment.config, ...structuredClone(options), seed };
  return experiment;
}

/** Parses "--methods a,b" (or the default list) and "--seeds" (a count n → seeds 1..n, or a list "3,7"). */
export function parseMethodList(text, methods = METHODS) {
  const list = text === undefined ? [...DEFAULT_METHODS] : text.split(',').map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) throw new Error('--methods names no method');
  for (const m of list) if (!methods[m]) throw new Error(`unknown method "${m}"; known: ${Object.keys(methods).join(', ')}`);
  // The baseline is what every method is compared with: always run it, first.
  return ['baseline', ...list.filter((m) => m !== 'baseline')].filter((m, i, a) => a.indexOf(m) === i);
}

export function parseSeeds(text) {
  const t = text ?? '2';
  const isCount = /^\d+$/.test(t);
  const seeds = isCount ? Array.from({ length: Number(t) }, (_, i) => i + 1) : t.split(',').map((s) => Number(s.trim()));
  if (seeds.length === 0 || seeds.some((s) => !Number.isInteger(s) || s < 0)) throw new Error(`--seeds must be a count or a list of non-negative integers, got "${t}"`);
  if (new Set(seeds).size !== seeds.length) throw new Error(`--seeds repeats a seed: "${t}"`);
  return seeds;
}

/**
 * Fraction of rollouts meeting every criterion of the rubric: each positive-weight criterion
 * scored at least `threshold` and no negative-weight one (a pitfall) at or above it. An
 * unscorable rollout (reward null) counts as not meeting them. null without rollouts.
 */
export function allCriteriaMet(rollouts, criteria, threshold = 0.5) {
  if (!rollouts.length) return null;
  const met = rollouts.filter(
    (r) =>
      r.reward !== null &&
      criteria.every((c, k) => {
        const s = r.scores[k];
        if (s === null || s === undefined) return false;
        return c.weight >= 0 ? s >= threshold : s < threshold;
      }),
  ).length;
  return met / rollouts.length;
}

const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
const numbers = (xs) => xs.filter((x) => typeof x === 'number' && Number.isFinite(x));

/**
 * One run's record: per-step series of what the table reads, and the last step's figures. `result`
 * is what scripts/page/train.ts's runExperiment returns ({status, steps, metrics, rollouts, errors}).
 */
export function runRecord(method, seed, result, criteria, seconds) {
  const m = result.metrics;
  const last = m.at(-1);
  const tail = m.slice(-3);
  const series = (f) => m.map(f);
  return {
    method,
    seed,
    status: result.status,
    steps: result.steps,
    errors: result.errors,
    wall_seconds: seconds,
    reward: series((s) => s.rewards.reward),
    criterion_pass_rate: series((s) => s.rewards.criterion_pass_rate),
    strict_completion: series((s) => s.rewards.strict_completion_rate),
    unexplored_criteria: series((s) => s.unexplored_criteria ?? null),
    suppressed_criteria: series((s) => s.suppressed_criteria ?? null),
    entropy: series((s) => s.entropy),
    frac_reward_zero_std: series((s) => s.frac_reward_zero_std),
    step_seconds: series((s) => s.step_seconds),
    final: last
      ? {
          step: last.step,
          reward: last.rewards.reward,
          reward_last3: mean(numbers(tail.map((s) => s.rewards.reward))),
          strict_completion_last3: mean(numbers(tail.map((s) => s.rewards.strict_completion_rate))),
          all_criteria_met: allCriteriaMet(result.rollouts, criteria),
          unexplored_per_step: mean(numbers(m.map((s) => s.unexplored_criteria))),
          suppressed_per_step: mean(numbers(m.map((s) => s.suppressed_criteria))),
          entropy: last.entropy,
          step_seconds: mean(numbers(m.slice(1).map((s) => s.step_seconds))) ?? last.step_seconds,
        }
      : null,
  };
}

/** Mean and spread (sample standard deviation; 0 for one seed) of the finite values; null if none. */
export function meanSpread(xs) {
  const v = numbers(xs);
  if (!v.length) return null;
  const m = mean(v);
  const sd = v.length > 1 ? Math.sqrt(v.reduce((s, x) => s + (x - m) ** 2, 0) / (v.length - 1)) : 0;
  return { mean: m, sd, n: v.length };
}

export const SUMMARY_FIELDS = [
  'reward',
  'reward_last3',
  'strict_completion_last3',
  'all_criteria_met',
  'unexplored_per_step',
  'suppressed_per_step',
  'entropy',
  'step_seconds',
];

/**
 * Per method (in first-seen order): mean ± sd over its finished runs of each summary field, and
 * the reward difference to the baseline paired by seed (mean ± sd of method − baseline over the
 * seeds both have). Runs without steps are counted in `failed` and left out of the figures.
 */
export function summarize(records) {
  const methods = [...new Set(records.map((r) => r.method))];
  const baseline = new Map(records.filter((r) => r.method === 'baseline' && r.final).map((r) => [r.seed, r.final]));
  return methods.map((method) => {
    const runs = records.filter((r) => r.method === method);
    const done = runs.filter((r) => r.final);
    const row = { method, seeds: done.map((r) => r.seed), failed: runs.length - done.length, steps: done.length ? Math.min(...done.map((r) => r.steps)) : 0 };
    for (const f of SUMMARY_FIELDS) row[f] = meanSpread(done.map((r) => r.final[f]));
    const paired = done.filter((r) => baseline.has(r.seed)).map((r) => [r.final, baseline.get(r.seed)]);
    const diff = (f) => numbers(paired.map(([a, b]) => (typeof a[f] === 'number' && typeof b[f] === 'number' ? a[f] - b[f] : null)));
    row.reward_vs_baseline = method === 'baseline' ? null : meanSpread(diff('reward_last3'));
    return row;
  });
}

// One seed has no spread: its value alone, not "± 0".
function fmt(ms, digits = 2) {
  if (!ms) return 'n/a';
  return ms.n > 1 ? `${ms.mean.toFixed(digits)} ± ${ms.sd.toFixed(digits)}` : ms.mean.toFixed(digits);
}

function fmtSigned(ms, digits = 3) {
  if (!ms) return '—';
  // A difference that rounds to zero reads 0.000, not -0.000 or +0.000.
  let m = ms.mean.toFixed(digits);
  if (Number(m) === 0) m = (0).toFixed(digits);
  else if (ms.mean > 0) m = `+${m}`;
  return ms.n > 1 ? `${m} ± ${ms.sd.toFixed(digits)}` : m;
}

/** The summary as a markdown table, one row per method, with a line saying what the columns are. */
export function markdownTable(rows) {
  const head =
    '| method | seeds | reward, last step | reward, last 3 steps | Δ vs baseline (last 3, paired by seed) | strict completion, last 3 | all criteria met, last step | UC / step | SC / step | entropy, last step | s / step |';
  const rule = '|' + ' --- |'.repeat(11);
  const lines = rows.map((r) =>
    [
      r.method,
      `${r.seeds.length}${r.failed ? ` (${r.failed} failed)` : ''}`,
      fmt(r.reward, 3),
      fmt(r.reward_last3, 3),
      fmtSigned(r.reward_vs_baseline),
      fmt(r.strict_completion_last3, 3),
      fmt(r.all_criteria_met, 3),
      fmt(r.unexplored_per_step, 2),
      fmt(r.suppressed_per_step, 2),
      fmt(r.entropy, 3),
      fmt(r.step_seconds, 1),
    ].join(' | '),
  );
  return [head, rule, ...lines.map((l) => `| ${l} |`)].join('\n');
}
