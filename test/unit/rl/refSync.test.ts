// sync_ref_model's config checks and step arithmetic (TRL: SyncRefModelCallback.on_step_end
// mixes when global_step % ref_model_sync_steps == 0; global_step counts optimizer steps).
import { describe, expect, it } from 'vitest';
import { GRPO_DEFAULTS, parseGrpoConfig } from '../../../src/rl/config';
import { isSyncStep, optimizerSteps, referenceDrifted } from '../../../src/rl/refSync';

describe('sync_ref_model', () => {
  it("has TRL's defaults: off, alpha 0.6, every 512 steps", () => {
    expect(GRPO_DEFAULTS).toMatchObject({ sync_ref_model: false, ref_model_mixup_alpha: 0.6, ref_model_sync_steps: 512 });
  });

  it('is refused where it would do nothing or TRL refuses it, naming why', () => {
    expect(() => parseGrpoConfig({ sync_ref_model: true })).toThrow(/sync_ref_model.*needs beta > 0/s);
    expect(() => parseGrpoConfig({ sync_ref_model: true, beta: 0.04, use_peft: true })).toThrow(/sync_ref_model.*cannot be used with use_peft/s);
    expect(() => parseGrpoConfig({ sync_ref_model: true, beta: 0.04, num_iterations: 2, ref_model_sync_steps: 5 })).toThrow(/ref_model_sync_steps.*multiple of num_iterations \(2\)/s);
    expect(() => parseGrpoConfig({ ref_model_mixup_alpha: 0 })).toThrow(/ref_model_mixup_alpha/);
    expect(() => parseGrpoConfig({ ref_model_sync_steps: 0 })).toThrow(/ref_model_sync_steps/);
    expect(parseGrpoConfig({ sync_ref_model: true, beta: 0.04, num_iterations: 2, ref_model_sync_steps: 4 }).sync_ref_model).toBe(true);
    // Off, the other two are TRL's inert settings and never refused for that.
    expect(parseGrpoConfig({ use_peft: true, ref_model_sync_steps: 3, num_iterations: 2 }).sync_ref_model).toBe(false);
  });

  it('mixes after the page steps whose optimizer-step count is a multiple of ref_model_sync_steps', () => {
    const cfg = { sync_ref_model: true, ref_model_mixup_alpha: 0.6, ref_model_sync_steps: 4, num_iterations: 2 };
    expect(optimizerSteps(cfg, 3)).toBe(6);
    const syncs = Array.from({ length: 9 }, (_, s) => s).filter((s) => isSyncStep(cfg, s));
    expect(syncs).toEqual([2, 4, 6, 8]);
    expect([0, 1, 2, 3].map((s) => referenceDrifted(cfg, s))).toEqual([false, false, true, true]);
    const off = { ...cfg, sync_ref_model: false };
    expect(isSyncStep(off, 2) || referenceDrifted(off, 8)).toBe(false);
  });
});
