import { describe, expect, it } from 'vitest';
import { judgeFailureMetrics, sanitizeReason, unscorableMessage, type JudgedRollout } from '../../../src/rl/judgeFailures';
import type { CriterionResult } from '../../../src/rubric';

const ok = (id: string, score = 1): CriterionResult => ({ criterion_id: id, status: 'ok', score, reason: 'fine' });
const bad = (id: string, reason: string): CriterionResult => ({ criterion_id: id, status: 'unscorable', score: null, reason });
const needs = (id: string): CriterionResult => ({ criterion_id: id, status: 'needs_model', score: null, reason: 'needs a model judge' });

describe('judge-failure metrics', () => {
  it('counts rollouts without a reward and failed verdicts, and keeps the first reason', () => {
    const rollouts: JudgedRollout[] = [
      { results: [ok('short'), ok('polite', 0)], reward: 0.5 },
      { results: [ok('short'), bad('polite', 'HTTP 500 from the endpoint (gave up after 2 attempts)')], reward: 1 },
      { results: [bad('polite', 'HTTP 500 from the endpoint: "second"')], reward: null },
      { results: [needs('polite')], reward: null },
    ];
    const m = judgeFailureMetrics(rollouts, 0.5);
    expect(m).toEqual({
      rollouts: 4,
      unscorable_rollouts: 2,
      unscorable_fraction: 0.5,
      verdicts: 6,
      failed_verdicts: 3,
      first_reason: 'criterion "polite": HTTP 500 from the endpoint (gave up after 2 attempts)',
      // 0.5 is not above 0.5: the threshold is passed only when exceeded.
      over_threshold: false,
    });
    expect(judgeFailureMetrics(rollouts, 0.49).over_threshold).toBe(true);
    expect(judgeFailureMetrics(rollouts, 1).over_threshold).toBe(false);
  });

  it('a step without failures has no reason and is never over the threshold', () => {
    const m = judgeFailureMetrics([{ results: [ok('a')], reward: 1 }], 0);
    expect(m.first_reason).toBeNull();
    expect(m.failed_verdicts).toBe(0);
    expect(m.over_threshold).toBe(false);
    expect(judgeFailureMetrics([], 0.5)).toMatchObject({ rollouts: 0, unscorable_fraction: 0, over_threshold: false });
  });

  it('refuses a threshold outside [0, 1]', () => {
    expect(() => judgeFailureMetrics([], 1.5)).toThrow(/max_unscorable_fraction/);
    expect(() => judgeFailureMetrics([], Number.NaN)).toThrow(/max_unscorable_fraction/);
  });

  it('scrubs anything key-like from the reason and shortens it to one line', () => {
    const reason = 'network error: 401 for Bearer sk-live-ABCDEF123456\n at https://x.example/v1?api_key=SECRET123&model=m';
    const clean = sanitizeReason(reason);
    expect(clean).not.toMatch(/ABCDEF123456|SECRET123/);
    expect(clean).toContain('Bearer [redacted]');
    expect(clean).toContain('api_key=[redacted]&model=m');
    expect(clean).not.toContain('\n');
    expect(sanitizeReason('a sk-proj-0123456789abcdef b')).toBe('a [redacted] b');
    const long = sanitizeReason('x'.repeat(1000));
    expect(long.length).toBe(301);
    const m = judgeFailureMetrics([{ results: [bad('c', 'refused key sk-abcdefghijkl')], reward: null }], 0.5);
    expect(m.first_reason).toBe('criterion "c": refused key [redacted]');
  });

  it('says how many rollouts had no reward, at which step, and why', () => {
    const m = judgeFailureMetrics(
      Array.from({ length: 16 }, (_, i) => ({ results: [i < 12 ? bad('polite', 'HTTP 500 from the endpoint') : ok('polite')], reward: i < 12 ? null : 1 })),
      0.5,
    );
    expect(unscorableMessage(3, m)).toBe('12 of 16 rollouts had no reward at step 3 (12 of 16 criterion verdicts failed): criterion "polite": HTTP 500 from the endpoint');
  });
});
