// A trained probe judge as data (src/rubric/probe.ts fits it, src/rl/probeJudge.ts runs it):
// per criterion the weights on the judge model's hidden state and a bias, with the label counts
// it was fitted on. Where it lives:
//   - IndexedDB, with the rubric version (RubricRecord.probe): the probe belongs to the rubric
//     and its labels, and a run opened later reads it back;
//   - run files (the run's experiment section carries it), so a downloaded run says exactly
//     which probe judged it;
//   - never in share links: a probe is D + 1 numbers per criterion (577 for SmolLM2-135M,
//     769 for GPT-2: ~10–20 KB of JSON per criterion), past what a URL should hold, and it is
//     derived from labels that stay on the user's machine. A link with judge kind "probe"
//     trains the probe again from the receiving page's own labels (or says which are missing).
import { z } from 'zod';

export interface StoredProbe {
  criterion_id: string;
  /** On the raw final hidden state (standardisation folded in), length hidden_size. */
  weights: number[];
  bias: number;
  /** Labels it was fitted on, by the person's call. */
  yes: number;
  no: number;
}

export interface ProbeSet {
  /** The judge model whose hidden states the probes read ("self": the policy's starting weights). */
  judge_model: string;
  hidden_size: number;
  l2: number;
  probes: StoredProbe[];
}

export const probeSetSchema = z
  .strictObject({
    judge_model: z.string().min(1).max(200),
    hidden_size: z.number().int().min(1).max(65536),
    l2: z.number().positive(),
    probes: z
      .array(
        z.strictObject({
          criterion_id: z.string().min(1).max(200),
          weights: z.array(z.number()),
          bias: z.number(),
          yes: z.number().int().min(0),
          no: z.number().int().min(0),
        }),
      )
      .max(100),
  })
  .superRefine((s, ctx) => {
    s.probes.forEach((p, i) => {
      if (p.weights.length !== s.hidden_size) {
        ctx.addIssue({ code: 'custom', path: ['probes', i, 'weights'], message: `criterion "${p.criterion_id}": ${p.weights.length} weights for hidden states of size ${s.hidden_size}` });
      }
    });
  });

/** Bytes a probe set takes as JSON (what a run file grows by). */
export const probeSetBytes = (set: ProbeSet): number => JSON.stringify(set).length;
