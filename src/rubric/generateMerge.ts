// Self-consistency over sampled rubrics (GenRubric, seed 000 #61: "independently sampled rubrics
// for the same query provide partial views of its latent evaluation requirements"). Without
// training a generator, the app samples n rubrics and keeps what recurs:
//   1. Criteria are matched across samples by text similarity (lint.ts `similarity`: Dice of
//      character trigrams) >= `similarity` (default 0.6), greedily in sample order: a criterion
//      joins the first cluster whose first member it matches and that has no member from its own
//      sample yet and the same sign of weight (a pitfall never merges with a positive check);
//      otherwise it starts a cluster.
//   2. A cluster's votes = the number of samples in it; clusters with votes >= k are kept, in the
//      order they were first proposed.
//   3. A kept cluster is written as its medoid (the member with the highest summed similarity to
//      the others; ties to the earliest), with the members' mean weight and their most common tier
//      (ties to the more important). Ids made unique with a suffix.
// The result is checked by the rubric schema; no criterion reaching k is an error, never an empty rubric.
import { GenerationError } from './generateParse';
import { draftRubric, type Complete, type DraftOptions } from './generate';
import { similarity } from './lint';
import { parseRubric, TIERS, type Criterion, type Rubric, type Tier } from './schema';

export const DEFAULT_MERGE_SIMILARITY = 0.6;

export interface MergeOptions {
  /** Keep criteria proposed by at least this many samples. Default: a majority, ⌊n/2⌋ + 1. */
  minVotes?: number;
  similarity?: number;
  name?: string;
}

export interface MergeResult {
  rubric: Rubric;
  /** Per kept criterion: how many samples proposed it. */
  votes: number[];
  /** Clusters below minVotes (left out). */
  dropped: number;
}

interface Cluster {
  members: { sample: number; criterion: Criterion }[];
}

export function mergeRubrics(samples: readonly Rubric[], options: MergeOptions = {}): MergeResult {
  const n = samples.length;
  if (n === 0) throw new RangeError('merging needs at least one sampled rubric');
  const k = options.minVotes ?? Math.floor(n / 2) + 1;
  if (!(Number.isInteger(k) && k >= 1 && k <= n)) throw new RangeError(`minVotes must be a whole number from 1 to ${n}, got ${k}`);
  const threshold = options.similarity ?? DEFAULT_MERGE_SIMILARITY;
  if (!(threshold > 0 && threshold <= 1)) throw new RangeError(`similarity must be in (0, 1], got ${threshold}`);

  const clusters: Cluster[] = [];
  samples.forEach((rubric, sample) => {
    for (const criterion of rubric.criteria) {
      const home = clusters.find(
        (c) =>
          !c.members.some((m) => m.sample === sample) &&
          Math.sign(c.members[0].criterion.weight) === Math.sign(criterion.weight) &&
          similarity(c.members[0].criterion.text, criterion.text) >= threshold,
      );
      if (home) home.members.push({ sample, criterion });
      else clusters.push({ members: [{ sample, criterion }] });
    }
  });

  const kept = clusters.filter((c) => c.members.length >= k);
  if (kept.length === 0) {
    throw new GenerationError([`no criterion was proposed by at least ${k} of the ${n} sampled rubrics (lower the votes needed, or sample more)`], '');
  }
  const used = new Set<string>();
  const criteria = kept.map(({ members }) => {
    const scores = members.map((a) => members.reduce((s, b) => s + (a === b ? 0 : similarity(a.criterion.text, b.criterion.text)), 0));
    const medoid = members[scores.indexOf(Math.max(...scores))].criterion;
    const weight = members.reduce((s, m) => s + m.criterion.weight, 0) / members.length;
    const counts = TIERS.map((t) => members.filter((m) => m.criterion.tier === t).length);
    const tier: Tier = TIERS[counts.indexOf(Math.max(...counts))];
    let id = medoid.id;
    for (let i = 2; used.has(id); i++) id = `${medoid.id.slice(0, 60)}_${i}`;
    used.add(id);
    return { ...medoid, id, weight, tier };
  });
  try {
    const rubric = parseRubric({ name: options.name ?? samples[0].name, criteria });
    return { rubric, votes: kept.map((c) => c.members.length), dropped: clusters.length - kept.length };
  } catch (e) {
    throw new GenerationError([`the merged rubric is not valid: ${(e as Error).message}`], '');
  }
}

export interface SampleResult extends MergeResult {
  /** Samples whose output was malformed (left out of the vote), with why. */
  failures: { sample: number; problems: readonly string[] }[];
}

/**
 * n rubrics drafted from the prompt (`complete` should sample, temperature > 0), merged by
 * self-consistency. A malformed sample is left out and reported; with fewer valid samples than
 * the votes needed, a GenerationError.
 */
export async function sampleRubrics(complete: Complete, prompt: string, n: number, options: DraftOptions & MergeOptions = {}): Promise<SampleResult> {
  if (!(Number.isInteger(n) && n >= 2 && n <= 16)) throw new RangeError(`samples must be a whole number from 2 to 16, got ${n}`);
  const k = options.minVotes ?? Math.floor(n / 2) + 1;
  const valid: Rubric[] = [];
  const failures: SampleResult['failures'] = [];
  for (let i = 0; i < n; i++) {
    try {
      valid.push(await draftRubric(complete, prompt, options));
    } catch (e) {
      if (!(e instanceof GenerationError)) throw e;
      failures.push({ sample: i + 1, problems: e.problems });
    }
  }
  if (valid.length < k) {
    const first = failures[0] ? ` (sample ${failures[0].sample}: ${failures[0].problems[0]})` : '';
    throw new GenerationError([`only ${valid.length} of ${n} samples gave a valid rubric, fewer than the ${k} votes needed${first}`], '');
  }
  return { ...mergeRubrics(valid, { ...options, minVotes: k }), failures };
}
