// The "Learn from a teacher" lesson's teacher in public/models/tiny-gpt2-byte-the/ (written by
// scripts/experiments/distill.mjs --save-teacher): it ships with the page, so it must pass the
// distillation teacher's tokenizer check against the embedded student, hold the student's tensors
// (same names and shapes, F16), be registered as an embedded model, and be what the lesson names.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EMBEDDED_MODELS } from '../../../src/model/registry';
import { readSafetensors } from '../../../src/model/safetensors';
import { tokenizerMismatch } from '../../../src/rl/distill/tokenizerCheck';
import { lessonById } from '../../../src/share/lessons';

const read = (model: string, name: string) => readFileSync(new URL(`../../../public/models/${model}/${name}`, import.meta.url));
const json = (model: string, name: string) => JSON.parse(read(model, name).toString('utf8')) as Record<string, unknown>;
const files = (model: string) => ({ config: json(model, 'config.json'), tokenizerJson: json(model, 'tokenizer.json'), tokenizerConfig: json(model, 'tokenizer_config.json') });
const weights = (model: string) => {
  const b = read(model, 'model.safetensors');
  return readSafetensors(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
};

describe('the shipped distillation teacher: public/models/tiny-gpt2-byte-the', () => {
  it('shares the embedded student\'s tokenizer (the teacher check passes)', () => {
    expect(tokenizerMismatch(files('tiny-gpt2-byte'), files('tiny-gpt2-byte-the'))).toBeNull();
  });

  it('holds the student\'s tensors, in F16, with trained (different) values, and stays small', () => {
    const student = weights('tiny-gpt2-byte');
    const teacher = weights('tiny-gpt2-byte-the');
    expect([...teacher.tensors.keys()].sort()).toEqual([...student.tensors.keys()].sort());
    let changed = 0;
    for (const [name, t] of teacher.tensors) {
      expect(t.shape, name).toEqual(student.tensors.get(name)!.shape);
      expect(teacher.dtypes.get(name), name).toBe('F16');
      const s = student.tensors.get(name)!.data;
      for (let i = 0; i < t.data.length; i++) if (Math.abs(t.data[i] - s[i]) > 1.5e-3) changed++;
    }
    // Two Adam steps of 2e-3 moved many weights by more than F16 rounding (under 1e-3 for |x| < 2).
    expect(changed).toBeGreaterThan(1000);
    expect(read('tiny-gpt2-byte-the', 'model.safetensors').byteLength).toBeLessThan(2_000_000);
  });

  it('is an embedded model, and the lesson\'s teacher', () => {
    expect(EMBEDDED_MODELS['embedded/tiny-gpt2-byte-the']?.url).toMatch(/models\/tiny-gpt2-byte-the\/$/);
    const config = lessonById('distill-teacher')!.shared.experiment.config as { distillation: { teacher: string; teacher_model: string; mode: string } };
    expect(config.distillation).toMatchObject({ teacher: 'model', teacher_model: 'embedded/tiny-gpt2-byte-the', mode: 'pure' });
  });
});
