import { describe, expect, it } from 'vitest';
import { verdictWords } from '../../../src/ui/lib/verdictWords';
import { chipsOf } from '../../../src/ui/lib/rollouts';
import type { RolloutRecord } from '../../../src/rl/grpoStep';

describe('verdict wording', () => {
  it('a penalty says what was detected and that it costs reward', () => {
    expect(verdictWords(false, -1).label).toBe('✗ detected: costs reward');
    expect(verdictWords(false, -2).explain).toContain('costs reward (weight −2)');
    expect(verdictWords(true, -1).label).toBe('✓ not detected');
    expect(verdictWords(true, -1).explain).toContain('no reward lost');
  });

  it('positive and tracked criteria read as met / not met', () => {
    expect(verdictWords(true, 2).label).toBe('✓ met');
    expect(verdictWords(false, 2).label).toBe('✗ not met');
    expect(verdictWords(true, 0).label).toBe('• met (tracked)');
  });

  it('the inspector chips of a penalty carry its weight, so they read the same way', () => {
    const rollout = { results: [{ criterion_id: 'caps', status: 'ok', score: 1, reason: 'all caps' }] } as unknown as RolloutRecord;
    const [chip] = chipsOf(rollout, [{ id: 'caps', text: 'Does not shout in capitals', weight: -1 }], 0.5);
    expect(chip.verdict).toBe('fail');
    expect(chip.weight).toBe(-1);
    expect(verdictWords(chip.verdict === 'pass', chip.weight!).label).toBe('✗ detected: costs reward');
  });
});
