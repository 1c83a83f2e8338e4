// The experiment's `judge_bias`: the bias sandbox (src/rubric/bias.ts) as data that links, run
// files and stored runs carry. Pure (zod only), so the builder and link parser validate it
// without the engine. Like a judge choice, it never carries a key: key-like fields are refused.
import { z } from 'zod';
import type { JudgeBias } from '../rubric/bias';
import { keyFieldIn } from './judgeChoice';

const criterionIds = z.array(z.string().min(1).max(200)).min(1, 'names no criterion (leave it out to bias every criterion)').max(100);
const common = {
  strength: z.number().min(0).max(1),
  seed: z.number().int().min(0).max(2 ** 32 - 1).optional(),
  criteria: criterionIds.optional(),
};

export const judgeBiasSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('length'), ...common, target_chars: z.number().int().min(1).max(100_000).optional() }),
  z.strictObject({ kind: z.literal('keyword'), ...common, words: z.array(z.string().trim().min(1).max(100)).min(1, 'needs at least one word').max(50) }),
  z.strictObject({ kind: z.literal('tone'), ...common }),
  z.strictObject({ kind: z.literal('leniency'), ...common }),
  /** Pairwise mode only (src/rubric/pairwise.ts): the judge favours one slot; pointwise verdicts never change. */
  z.strictObject({ kind: z.literal('position'), ...common, slot: z.enum(['first', 'second']).optional() }),
]);

/** The kinds the schema accepts, in the wrapper's order (a unit test checks they are BIAS_KINDS). */
export const BIAS_CHOICE_KINDS = judgeBiasSchema.options.map((o) => o.shape.kind.value);

export type JudgeBiasChoice = z.output<typeof judgeBiasSchema>;
/** Every valid choice is a bias the wrapper applies (a compile-time check). */
export const asJudgeBias = (choice: JudgeBiasChoice): JudgeBias => choice;

/** A message when `input` carries a key-like field (api_key, token...), else null. */
export function biasKeyField(input: unknown): string | null {
  return keyFieldIn(input);
}

/** The bias's criterion filter names ids the rubric lacks: a clear message, else null. */
export function unknownBiasCriteria(bias: JudgeBias, criterionIds: readonly string[]): string | null {
  const missing = (bias.criteria ?? []).filter((id) => !criterionIds.includes(id));
  return missing.length ? `names criteria the rubric does not have: ${missing.map((m) => `"${m}"`).join(', ')}` : null;
}
