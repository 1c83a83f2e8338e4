// Argument checks for the store's public methods: bad input is refused with a RangeError naming
// the argument before any transaction starts, so it can never leave anything half-written.
import type { CheckpointFiles } from '../model/checkpoint';
import type { RolloutRecord, StepMetrics } from '../rl/grpoStep';
import { RUN_STATUSES, type RunStatus } from './schema';

export const MAX_NAME_LENGTH = 200;

export function checkId(value: unknown, arg: string): asserts value is string {
  if (typeof value !== 'string' || value === '') throw new RangeError(`${arg} must be a non-empty string`);
}

export function checkName(value: unknown, arg: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new RangeError(`${arg} must be a non-empty string`);
  const name = value.trim();
  if (name.length > MAX_NAME_LENGTH) throw new RangeError(`${arg} must be at most ${MAX_NAME_LENGTH} characters, got ${name.length}`);
  return name;
}

export function checkCount(value: unknown, arg: string, min: number): asserts value is number {
  if (!Number.isInteger(value) || (value as number) < min) throw new RangeError(`${arg} must be an integer >= ${min}, got ${String(value)}`);
}

export function checkStatus(value: unknown): asserts value is RunStatus {
  if (!(RUN_STATUSES as readonly unknown[]).includes(value)) throw new RangeError(`status must be one of ${RUN_STATUSES.join(', ')}, got ${String(value)}`);
}

export function checkPrompts(value: unknown, arg: string): string[] {
  if (!Array.isArray(value) || value.length === 0) throw new RangeError(`${arg} must be a non-empty array of strings`);
  value.forEach((p, i) => {
    if (typeof p !== 'string') throw new RangeError(`${arg}[${i}] must be a string, got ${typeof p}`);
  });
  return [...(value as string[])];
}

const isArrayBuffer = (x: unknown): x is ArrayBuffer => Object.prototype.toString.call(x) === '[object ArrayBuffer]';

export function checkCheckpoint(files: unknown, arg: string): asserts files is CheckpointFiles {
  if (typeof files !== 'object' || files === null) throw new RangeError(`${arg} must be an object of checkpoint files`);
  const f = files as Record<string, unknown>;
  for (const name of ['config.json', 'trainer_state.json']) {
    if (typeof f[name] !== 'string') throw new RangeError(`${arg}["${name}"] must be a string`);
  }
  if (!isArrayBuffer(f['model.safetensors'])) throw new RangeError(`${arg}["model.safetensors"] must be an ArrayBuffer`);
  for (const name of ['optimizer.safetensors', 'ref_model.safetensors', 'ema_model.safetensors']) {
    if (f[name] !== undefined && !isArrayBuffer(f[name])) throw new RangeError(`${arg}["${name}"] must be an ArrayBuffer when present`);
  }
}

export function checkMetrics(metrics: unknown, step: number): asserts metrics is StepMetrics {
  if (typeof metrics !== 'object' || metrics === null) throw new RangeError('metrics must be a StepMetrics object');
  const s = (metrics as { step?: unknown }).step;
  if (s !== step) throw new RangeError(`metrics.step is ${String(s)}, but the commit is for step ${step}`);
}

export function checkRollouts(rollouts: unknown, step: number): asserts rollouts is RolloutRecord[] {
  if (!Array.isArray(rollouts)) throw new RangeError('rollouts must be an array of RolloutRecord');
  const seen = new Set<string>();
  rollouts.forEach((r: Partial<RolloutRecord> | null, i) => {
    if (typeof r !== 'object' || r === null) throw new RangeError(`rollouts[${i}] must be a RolloutRecord object`);
    if (r.step !== step) throw new RangeError(`rollouts[${i}].step is ${String(r.step)}, but the commit is for step ${step}`);
    if (!Number.isInteger(r.group) || r.group! < 0) throw new RangeError(`rollouts[${i}].group must be an integer >= 0, got ${String(r.group)}`);
    if (!Number.isInteger(r.index) || r.index! < 0) throw new RangeError(`rollouts[${i}].index must be an integer >= 0, got ${String(r.index)}`);
    if (!Array.isArray(r.results)) throw new RangeError(`rollouts[${i}].results must be an array`);
    const key = `${r.group}/${r.index}`;
    if (seen.has(key)) throw new RangeError(`rollouts[${i}] repeats group ${r.group}, index ${r.index}`);
    seen.add(key);
  });
}
