// On-policy distillation (issue 11): teachers (teacher.ts), the update's distillation term
// (pass.ts) and its pure parts (align.ts).
import type { GrpoConfig } from '../config';

export * from './align';
export * from './teacher';
export { recordDistillTerm, type DistillPass, type DistillRead } from './pass';
export { tokenizerMismatch, type TokenizerFiles } from './tokenizerCheck';
export { injectionMetrics, injectionSelection, withRowWeights, type InjectionRow, type InjectionSelection } from './injection';

/** Pure distillation: a teacher and no reward (nothing is judged; every advantage is 0). */
export function distillationOnly(config: Pick<GrpoConfig, 'distillation'>): boolean {
  return config.distillation.teacher !== 'off' && config.distillation.mode === 'pure';
}
