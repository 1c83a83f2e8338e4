// An offline writer for rubric_evolution "rare" (RARE, seed 000 #10): a catalogue of rule-based
// flaw checks, so a saturated criterion can be replaced with no model at all (the option
// rubric_evolution_writer "catalogue"). Nothing here is model-written: each check is a rule of
// the rubric language (rules.ts) with a fixed text, and a few take one parameter from the
// window's rollouts (a word count, a word the rollouts repeat).
//
// The proposal for a saturated criterion is the catalogue check that is most discriminative on
// the window's stored rollouts: scored by its rule on each rollout, measured as any criterion is
// (measure.ts), it must have within-group variance > 0 and the flag 'discriminative' (neither
// saturated nor unreachable in most groups), must not repeat a kept criterion (same id or same
// rule) or agree with one on the window (|Pearson r| >= REDUNDANT_CORRELATION: the same behaviour
// counted twice); of those, the largest within-group variance wins (ties: catalogue order). It
// then goes through the same guarded acceptance as a model's proposal (evolve.ts), scored by the
// run's own judges.
//
// What the rule language cannot express honestly is left out: restating the prompt (a rule sees
// only the response, and one rubric serves every prompt), repetition of any word (RE2 has no
// backreferences: only a word the window's rollouts repeat can be named), facts, relevance.
import { DEFAULT_PASS_THRESHOLD } from './aggregate';
import { measureRubric, pearson, REDUNDANT_CORRELATION } from './measure';
import { checkRule } from './rules';
import { countWords } from './text';
import { isRuleCriterion, parseRubric, type Criterion, type Rubric, type RuleCriterion } from './schema';
import type { EvolutionRollout, NoProposal, Proposal } from './evolve';

/** A flaw check of the catalogue: met (score 1) when the response has the flaw. */
export interface FlawCheck {
  id: string;
  text: string;
  rule: RuleCriterion['rule'];
}

/** The checks that take no parameter, in catalogue order (the tie-break). */
const FIXED: readonly { id: string; text: string; rule: Record<string, unknown> }[] = [
  {
    id: 'unfinished_sentence',
    text: 'Its last sentence is unfinished (the response does not end with . ! ? or a closing quote or bracket)',
    // The last non-space character is not a sentence end: an empty response has none and is not flagged here.
    rule: { kind: 'regex', pattern: '[^.!?"\')\\]\\s]\\s*$' },
  },
  {
    id: 'letter_stutter',
    text: 'Repeats one letter four or more times in a row (e.g. "aaaa")',
    rule: { kind: 'regex', pattern: [...'abcdefghijklmnopqrstuvwxyz'].map((c) => `${c}{4}`).join('|'), flags: 'i' },
  },
  {
    id: 'symbol_run',
    text: 'Has a run of three or more symbols (characters that are not letters, digits, spaces or sentence punctuation)',
    rule: { kind: 'regex', pattern: '[^\\p{L}\\p{N}\\s.,;:!?\'"()-]{3,}', flags: 'u' },
  },
  {
    id: 'repeated_punctuation',
    text: 'Repeats punctuation (e.g. "!!", ",," or "....")',
    rule: { kind: 'regex', pattern: '[!?,;:]{2,}|\\.{4,}' },
  },
  {
    id: 'run_together',
    text: 'Runs letters together: a "word" of 16 or more letters',
    rule: { kind: 'regex', pattern: '[A-Za-z]{16,}' },
  },
  {
    id: 'shouting',
    text: 'Shouts: a word of four or more capital letters',
    rule: { kind: 'regex', pattern: '\\b[A-Z]{4,}\\b' },
  },
  {
    id: 'double_space',
    text: 'Has stray spacing (two or more spaces in a row)',
    rule: { kind: 'regex', pattern: ' {2,}' },
  },
  {
    id: 'empty',
    text: 'Says nothing (empty, or only spaces)',
    rule: { kind: 'regex', pattern: '\\S', expect: 'no_match' },
  },
];

/** Words a check may name: letters only (so a word is safe inside a pattern), three or more. */
const WORD = /\p{L}{3,}/gu;
/** Repeated words the catalogue offers at most (the ones most rollouts repeat). */
export const MAX_REPEATED_WORDS = 3;

/** The q-quantile (0..1) of sorted numbers, the lower one (a count the window holds). */
function lowerQuantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * (sorted.length - 1)))];
}

/**
 * Checks with a parameter from the window's completions: "runs long" above the median and the
 * upper-quartile word count, and "repeats the word X" for the ASCII words that the most rollouts
 * use twice or more.
 */
function fromWindow(completions: readonly string[]): { id: string; text: string; rule: Record<string, unknown> }[] {
  const out: { id: string; text: string; rule: Record<string, unknown> }[] = [];
  const words = completions.map((c) => countWords(c)).sort((a, b) => a - b);
  if (words.length) {
    for (const n of new Set([lowerQuantile(words, 0.5), lowerQuantile(words, 0.75)])) {
      if (n >= 1) out.push({ id: `runs_long_${n}`, text: `Runs long: more than ${n} words`, rule: { kind: 'length', unit: 'words', min: n + 1 } });
    }
  }
  const repeatedIn = new Map<string, number>();
  for (const c of completions) {
    const counts = new Map<string, number>();
    for (const w of c.normalize('NFC').toLowerCase().match(WORD) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1);
    for (const [w, n] of counts) if (n >= 2 && /^[a-z]+$/.test(w)) repeatedIn.set(w, (repeatedIn.get(w) ?? 0) + 1);
  }
  const top = [...repeatedIn].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, MAX_REPEATED_WORDS);
  for (const [w] of top) {
    const id = `repeats_${w}`.slice(0, 64);
    out.push({ id, text: `Repeats the word "${w}"`, rule: { kind: 'regex', pattern: `\\b${w}\\b[\\s\\S]*\\b${w}\\b`.slice(0, 200), flags: 'i' } });
  }
  return out;
}

/**
 * The catalogue for a window: the fixed checks, then the ones with a parameter from the window's
 * completions, each a valid rule (parsed by the rubric schema, defaults filled in).
 */
export function flawCatalogue(completions: readonly string[]): FlawCheck[] {
  const raw = [...FIXED, ...fromWindow(completions)];
  const parsed = parseRubric({ name: 'flaw catalogue', criteria: raw.map((c) => ({ ...c, weight: 1, tier: 'important' })) });
  return parsed.criteria.map((c) => ({ id: c.id, text: c.text, rule: (c as RuleCriterion).rule }));
}

/** One catalogue check measured on the window. */
export interface CatalogueCandidate {
  check: FlawCheck;
  /** Its score per window rollout (1: has the flaw; null: unscorable). */
  scores: (number | null)[];
  withinGroupVariance: number | null;
  flag: string;
  /** Why it cannot be proposed; null when it can. */
  excluded: string | null;
}

const sameRule = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Every catalogue check scored and measured on `snapshot`, with why it is excluded (or null),
 * against the criteria the proposal keeps (`kept`, with their scores in the snapshot at `keptIndex`).
 */
export function measureCatalogue(
  snapshot: readonly EvolutionRollout[],
  kept: readonly { criterion: Criterion; index: number }[],
  threshold = DEFAULT_PASS_THRESHOLD,
): CatalogueCandidate[] {
  return flawCatalogue(snapshot.map((r) => r.completion)).map((check): CatalogueCandidate => {
    const scores = snapshot.map((r) => {
      const o = checkRule(check.rule, r.completion);
      return o.status === 'ok' ? o.score : null;
    });
    const m = measureRubric(
      { name: 'check', criteria: [{ ...check, weight: -1, tier: 'important' }] },
      snapshot.map((r, i) => ({ step: r.step, group: r.group, scores: [scores[i]] })),
      { threshold },
    ).criteria[0];
    const v = m.withinGroupVariance;
    let excluded: string | null = null;
    const twin = kept.find(({ criterion: c }) => c.id === check.id || (isRuleCriterion(c) && sameRule(c.rule, check.rule)));
    if (twin) excluded = `the rubric has it already ("${twin.criterion.id}")`;
    else if (v === null) excluded = 'not scorable on the window';
    else if (v === 0) excluded = `zero within-group variance (${m.flag})`;
    else if (m.flag !== 'discriminative') excluded = `${m.flag} in most groups`;
    else {
      for (const { criterion, index } of kept) {
        const xs: number[] = [];
        const ys: number[] = [];
        snapshot.forEach((r, i) => {
          const a = scores[i];
          const b = r.scores[index];
          if (a !== null && b !== null) {
            xs.push(a);
            ys.push(b);
          }
        });
        const r = pearson(xs, ys);
        if (r !== null && Math.abs(r) >= REDUNDANT_CORRELATION) {
          excluded = `redundant with "${criterion.id}" on the window (r = ${r.toFixed(2)})`;
          break;
        }
      }
    }
    return { check, scores, withinGroupVariance: v, flag: m.flag, excluded };
  });
}

/**
 * RARE with the catalogue as the writer: `target` (a saturated criterion of `rubric`) is replaced
 * by the most discriminative catalogue check on `snapshot` (see the header), a pitfall with the
 * target's weight, negated. No such check: no proposal, with each check's reason.
 */
export function catalogueRareProposal(rubric: Rubric, target: Criterion, snapshot: readonly EvolutionRollout[], threshold?: number): Proposal | NoProposal {
  const kept = rubric.criteria.flatMap((criterion, index) => (criterion.id === target.id ? [] : [{ criterion, index }]));
  const candidates = measureCatalogue(snapshot, kept, threshold);
  const usable = candidates.filter((c) => c.excluded === null);
  if (usable.length === 0) {
    const why = candidates.map((c) => `${c.check.id}: ${c.excluded}`).join('; ');
    return { none: `"${target.id}" is met by every rollout of the recent steps, but no flaw check of the catalogue is discriminative on the window (${why}): the rubric stays` };
  }
  // Stable sort: ties keep catalogue order.
  const best = [...usable].sort((a, b) => (b.withinGroupVariance ?? 0) - (a.withinGroupVariance ?? 0))[0];
  const flaw: Criterion = { id: best.check.id, text: best.check.text, weight: -Math.abs(target.weight), tier: 'important', rule: best.check.rule };
  return {
    rubric: { ...rubric, criteria: [...kept.map((k) => k.criterion), flaw] },
    removed: [target.id],
    added: [flaw.id],
    reason: `"${target.id}" is met by every rollout of the recent steps: replaced by the catalogue's flaw check "${flaw.id}" (rule-based, not model-written; within-group variance ${best.withinGroupVariance!.toFixed(4)} on the window, the most discriminative of ${usable.length} usable of ${candidates.length} checks)`,
  };
}
