import { describe, expect, it } from 'vitest';
import {
  AUTO_EVERY_STEP_MAX_BYTES,
  AUTO_SAVE_STEPS_LARGE,
  checkpointDue,
  checkpointPlace,
  describeCheckpoints,
  estimateCheckpointBytes,
  redoneSteps,
  resolveSaveSteps,
} from '../../../src/rl/checkpointPolicy';
import { GRPO_DEFAULTS, parseGrpoConfig, TRL_DEFAULT_DIFFERENCES } from '../../../src/rl/config';

const MB = 1024 * 1024;

describe('checkpoint size rule (save_steps auto)', () => {
  it('estimates weights plus two AdamW moments; under LoRA only the adapter', () => {
    expect(estimateCheckpointBytes({ parameters: 1000, trainableParameters: 1000, lora: false })).toBe(12_000);
    expect(estimateCheckpointBytes({ parameters: 135e6, trainableParameters: 1e6, lora: true })).toBe(12e6);
    // A full 135M model: weights 540 MB plus moments.
    expect(estimateCheckpointBytes({ parameters: 135e6, trainableParameters: 135e6, lora: false })).toBe(1620e6);
  });

  it('auto is the default: every step when small, every 10 when large; numbers are kept', () => {
    expect(GRPO_DEFAULTS.save_steps).toBeNull();
    expect(parseGrpoConfig({ save_steps: 3 }).save_steps).toBe(3);
    expect(resolveSaveSteps(null, AUTO_EVERY_STEP_MAX_BYTES)).toBe(1);
    expect(resolveSaveSteps(null, AUTO_EVERY_STEP_MAX_BYTES + 1)).toBe(AUTO_SAVE_STEPS_LARGE);
    expect(resolveSaveSteps(5, 1)).toBe(5);
    expect(resolveSaveSteps(0, 1)).toBe(0);
    // The settings' note names the same threshold.
    expect(TRL_DEFAULT_DIFFERENCES.save_steps.why).toContain(`${AUTO_EVERY_STEP_MAX_BYTES / MB} MB`);
  });

  it('decides when a checkpoint is due, reading the size only for auto', () => {
    const small = () => 0.4 * MB;
    const large = () => 50 * MB;
    expect([1, 2, 3].map((s) => checkpointDue(null, s, small))).toEqual([true, true, true]);
    expect([1, 9, 10, 20].map((s) => checkpointDue(null, s, large))).toEqual([false, false, true, true]);
    expect([1, 2, 4].map((s) => checkpointDue(2, s, () => { throw new Error('not read'); }))).toEqual([false, true, true]);
    expect(checkpointDue(0, 10, small)).toBe(false);
  });

  it('says what it does, with the size', () => {
    expect(describeCheckpoints(null, 0.4 * MB)).toBe('every step and on pause (about 0.4 MB each; auto: at most 16 MB)');
    expect(describeCheckpoints(null, 54 * MB)).toBe('every 10 steps and on pause (about 54 MB each; auto: over 16 MB)');
    expect(describeCheckpoints(5, 2048)).toBe('every 5 steps and on pause (about 2 kB each)');
    expect(describeCheckpoints(0, 3 * 1024 ** 3)).toBe('only on pause and stop (about 3.0 GB each)');
  });
});

describe('what resuming redoes', () => {
  it('a checkpoint of global_step K holds steps 0..K-1; stored steps from K on are redone', () => {
    expect(redoneSteps(2, [0, 1])).toBeNull();
    expect(redoneSteps(2, [0, 1, 2, 3, 4])).toEqual({ from: 2, through: 4, count: 3 });
    expect(redoneSteps(0, [0])).toEqual({ from: 0, through: 0, count: 1 });
    expect(redoneSteps(3, [])).toBeNull();
    // The status line's "Paused after step 1" and the checkpoint taken then (global_step 2) agree.
    expect(checkpointPlace(2)).toBe('after step 1');
    expect(checkpointPlace(0)).toBe('before step 0 (the starting weights)');
  });
});
