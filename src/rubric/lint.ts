// Static rubric lint: checks a parsed rubric before training, instantly and without a model.
// Each finding names its criterion (1-based, as the builder numbers them), says what is wrong
// and how to fix it, and some carry a mechanical fix (replacement criteria) the builder can apply.
// These are heuristics over the text and the rule: a finding is a prompt to look, not an error —
// the schema (parseRubric) is what refuses invalid rubrics.
import { canonicalJson } from './version';
import { isRuleCriterion, type Criterion, type Rubric, type Rule } from './schema';

export const LINT_CODES = [
  'compound',
  'vague',
  'unverifiable',
  'near_duplicate',
  'all_penalty',
  'dominant_weight',
  'penalty_reads_positive',
  'rule_text_mismatch',
] as const;
export type LintCode = (typeof LINT_CODES)[number] | 'leakage';

/** A mechanical fix: the criterion is replaced by `replacement` (empty: removed). */
export interface LintFix {
  label: string;
  replacement: Criterion[];
}

export interface LintFinding {
  code: LintCode;
  /** 1-based position of the criterion as shown; null for the rubric as a whole. */
  criterion: number | null;
  message: string;
  suggestion: string;
  fix?: LintFix;
}

/** Near-duplicate threshold on the Dice coefficient of word-trigram-free character trigrams (see similarity). */
export const DUPLICATE_SIMILARITY = 0.8;

const quoteText = (s: string) => `"${s.length > 60 ? `${s.slice(0, 57)}...` : s}"`;

// ---- compound criteria ----

const CONJUNCTION = /\s*(?:,?\s+\b(?:and|or|and\/or|as well as)\b\s+|;\s*)/i;

/** Base-form and auxiliary verbs a second check may start with ("... and explain why", "... and does it cite"). */
const CLAUSE_VERBS = new Set([
  'is', 'are', 'was', 'does', 'do', 'did', 'has', 'have', 'can', 'will', 'should', 'must', 'it', 'they',
  'give', 'use', 'avoid', 'include', 'explain', 'mention', 'cite', 'list', 'name', 'state', 'keep', 'stay', 'end', 'start',
  'answer', 'ask', 'provide', 'offer', 'describe', 'define', 'show', 'say', 'write', 'follow', 'refer', 'quote', 'suggest', 'stays', 'be',
]);
/** Words that continue a noun phrase rather than start a check ("one or two sentences", "at least ... and the"). */
const PHRASE_WORDS = /^(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|a|an|the|more|less|fewer|its|their|his|her|other|this|these|those)$/i;

/** Whether a part could start a check of its own: its first word looks like a verb (3rd person -s, or a listed verb). */
function startsClause(part: string): boolean {
  const first = part.split(/\s+/)[0].replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '').toLowerCase();
  if (!first || PHRASE_WORDS.test(first)) return false;
  return CLAUSE_VERBS.has(first) || (/[^s]s$/.test(first) && first.length > 3);
}

/**
 * The parts of a compound text: split at "and" / "or" / ";" where every part has at least two
 * words and every part after the first starts like a check of its own (a verb). So "mentions
 * salt and pepper" and "says one or two sentences" are one check each, while "is concise and
 * cites a source" is two. A heuristic: "lists causes and effects of war" would be split too.
 * Returns [] when the text is not compound.
 */
export function compoundParts(text: string): string[] {
  const body = text.trim().replace(/[.?!]+$/, '');
  const parts = body.split(CONJUNCTION).map((p) => p.trim());
  if (parts.length < 2) return [];
  if (parts.some((p) => p.split(/\s+/).filter(Boolean).length < 2)) return [];
  if (!parts.slice(1).every(startsClause)) return [];
  return parts;
}

const capitalised = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function uniqueId(base: string, used: Set<string>): string {
  let n = 1;
  let id = `${base}_${n}`.slice(0, 64);
  while (used.has(id)) id = `${base.slice(0, 58)}_${++n}`;
  used.add(id);
  return id;
}

/** Splits a judge-question criterion into one criterion per part, sharing its weight equally. */
function splitFix(c: Criterion, parts: string[], used: Set<string>): LintFix | undefined {
  if (isRuleCriterion(c)) return undefined; // a rule checks one thing: splitting the text cannot split it
  const questionParts = compoundParts(c.judge_question);
  const weight = c.weight / parts.length;
  return {
    label: `Split into ${parts.length} criteria`,
    replacement: parts.map((part, i) => ({
      id: uniqueId(c.id, used),
      text: capitalised(part),
      weight,
      tier: c.tier,
      judge_question: questionParts.length === parts.length ? capitalised(questionParts[i]).replace(/\??$/, '?') : `Does the response meet this: ${part}?`,
      choices: [...c.choices],
    })),
  };
}

// ---- wording ----

/** Words a judge cannot check without guessing the author's standard. */
const VAGUE = [
  'good', 'nice', 'appropriate', 'appropriately', 'properly', 'proper', 'well', 'reasonable', 'adequate', 'adequately',
  'high quality', 'high-quality', 'quality', 'sufficient', 'sufficiently', 'somewhat', 'etc', 'as needed', 'if needed',
  'suitable', 'decent', 'better', 'great', 'excellent', 'interesting', 'engaging', 'helpful',
];
/** States of mind a judge cannot observe in the text. */
const UNVERIFIABLE = ['understands', 'understand', 'believes', 'believe', 'knows', 'intends', 'intend', 'tries to', 'try to', 'feels', 'wants to', 'cares'];

/** Whole-word matchers for a fixed word list (the lists hold letters, spaces, "-" and "/" only). */
const wholeWords = (list: readonly string[]) => list.map((w) => [w, new RegExp(`(?<![\\p{L}\\p{N}])${w}(?![\\p{L}\\p{N}])`, 'u')] as const);
const VAGUE_RE = wholeWords(VAGUE);
const UNVERIFIABLE_RE = wholeWords(UNVERIFIABLE);

function wordsFound(text: string, list: readonly (readonly [string, RegExp])[]): string[] {
  const lower = text.toLowerCase();
  return list.filter(([, re]) => re.test(lower)).map(([w]) => w);
}

/** The criterion's wording a judge reads: its text, and its question for a judged criterion. */
const wordingOf = (c: Criterion) => (isRuleCriterion(c) ? c.text : `${c.text} ${c.judge_question}`);

// ---- near duplicates ----

const normalised = (s: string) => s.toLowerCase().normalize('NFC').replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

function trigrams(s: string): Map<string, number> {
  const t = ` ${normalised(s)} `;
  const out = new Map<string, number>();
  for (let i = 0; i + 3 <= t.length; i++) out.set(t.slice(i, i + 3), (out.get(t.slice(i, i + 3)) ?? 0) + 1);
  return out;
}

/**
 * Text similarity in [0, 1]: the Sørensen–Dice coefficient of character-trigram multisets of the
 * normalised texts (lower case, punctuation as spaces): 2|A ∩ B| / (|A| + |B|). 1 = same words.
 */
export function similarity(a: string, b: string): number {
  const A = trigrams(a);
  const B = trigrams(b);
  let both = 0;
  let total = 0;
  for (const [g, n] of A) {
    both += Math.min(n, B.get(g) ?? 0);
    total += n;
  }
  for (const n of B.values()) total += n;
  return total === 0 ? 1 : (2 * both) / total;
}

// ---- text vs rule ----

/** Negated or avoiding wording: the text names what must NOT happen. */
const NEGATED = /\b(?:does not|doesn't|do not|don't|is not|isn't|never|no|not|without|avoids?|free of|refrains? from|omits?)\b/i;

/** A rule's exact inverse (passes exactly when the original fails), where the schema has one. */
export function invertedRule(rule: Rule): Rule | null {
  switch (rule.kind) {
    case 'contains':
      return { ...rule, kind: 'not_contains' };
    case 'not_contains':
      return { ...rule, kind: 'contains' };
    case 'regex':
      return { ...rule, expect: rule.expect === 'match' ? 'no_match' : 'match' };
    default:
      return null;
  }
}

const UNIT_WORDS: Record<string, string> = {
  word: 'words', words: 'words',
  character: 'characters', characters: 'characters', char: 'characters', chars: 'characters', letters: 'characters',
  token: 'tokens', tokens: 'tokens',
  sentence: 'sentences', sentences: 'sentences',
  line: 'lines', lines: 'lines',
  bullet: 'bullets', bullets: 'bullets', 'bullet points': 'bullets', points: 'bullets',
};

/** Why a length/count rule disagrees with the numbers or unit its text states; null if it does not. */
function boundsMismatch(text: string, rule: Extract<Rule, { kind: 'length' | 'count' }>): string | null {
  const stated = [...text.toLowerCase().matchAll(/(\d+)\s*(bullet points|[a-z]+)/g)].filter((m) => UNIT_WORDS[m[2]] !== undefined);
  if (stated.length === 0) return null;
  const units = new Set(stated.map((m) => UNIT_WORDS[m[2]]));
  if (!units.has(rule.unit)) return `the text counts ${[...units].join('/')} but the rule counts ${rule.unit}`;
  const numbers = stated.filter((m) => UNIT_WORDS[m[2]] === rule.unit).map((m) => Number(m[1]));
  const bounds = [rule.min, rule.max].filter((b): b is number => b !== undefined);
  if (!numbers.some((n) => bounds.includes(n))) {
    return `the text says ${numbers.join(', ')} ${rule.unit} but the rule's bounds are ${rule.min ?? '(none)'} to ${rule.max ?? '(none)'}`;
  }
  return null;
}

/** Text that reads "includes X" while the rule forbids, or "does not include X" while it requires. */
function polarityMismatch(text: string, rule: Rule): string | null {
  const negated = NEGATED.test(text);
  if (rule.kind === 'contains' && negated) return 'the text says what must not appear, but the rule is "contains" (met when a term appears)';
  if (rule.kind === 'not_contains' && !negated && /\b(?:mentions?|includes?|contains?|uses?|names?|cites?|says?)\b/i.test(text)) {
    return 'the text says something must appear, but the rule is "does not contain" (met when no term appears)';
  }
  if (rule.kind === 'regex' && rule.expect === 'match' && negated && /\b(?:match|matches|contains?|uses?|includes?)\b/i.test(text)) {
    return 'the text says what must not appear, but the regex rule expects a match';
  }
  return null;
}

// ---- the lint ----

/** Every static finding for the rubric, in criterion order, rubric-wide findings first. */
export function lintRubric(rubric: Rubric): LintFinding[] {
  const findings: LintFinding[] = [];
  const criteria = rubric.criteria;
  const used = new Set(criteria.map((c) => c.id));

  // Rubric-wide: weight balance.
  const positive = criteria.filter((c) => c.weight > 0);
  const penalties = criteria.filter((c) => c.weight < 0);
  const earn = positive.reduce((s, c) => s + c.weight, 0);
  const lose = penalties.reduce((s, c) => s - c.weight, 0);
  if (penalties.length > positive.length && lose >= earn) {
    findings.push({
      code: 'all_penalty',
      criterion: null,
      message: `${penalties.length} of ${criteria.length} criteria are pitfalls (weight ${lose} to lose against ${earn} to earn): an empty or evasive answer avoids every pitfall and scores near the top.`,
      suggestion: 'Add positive criteria that an answer must earn (what a good answer contains), or lower the pitfall weights.',
    });
  }

  criteria.forEach((c, k) => {
    const n = k + 1;
    const rule = isRuleCriterion(c) ? c.rule : null;

    const parts = compoundParts(c.text);
    if (parts.length > 0) {
      const fix = splitFix(c, parts, used);
      findings.push({
        code: 'compound',
        criterion: n,
        message: `${quoteText(c.text)} joins ${parts.length} checks: a response meeting one part can get full (or no) credit for both.`,
        suggestion: rule
          ? `Write one criterion per check (${parts.map(quoteText).join(', ')}), each with its own rule.`
          : `Split it into ${parts.map(quoteText).join(' and ')}, one criterion each.`,
        ...(fix ? { fix } : {}),
      });
    }

    const vague = wordsFound(wordingOf(c), VAGUE_RE);
    if (vague.length > 0 && !rule) {
      findings.push({
        code: 'vague',
        criterion: n,
        message: `${vague.map((w) => `"${w}"`).join(', ')} leaves the standard to the judge's taste, so its verdicts vary.`,
        suggestion: 'Name what the judge should see in the response (a fact, a step, a format), not how good it is.',
      });
    }

    const unverifiable = wordsFound(wordingOf(c), UNVERIFIABLE_RE);
    if (unverifiable.length > 0) {
      findings.push({
        code: 'unverifiable',
        criterion: n,
        message: `${unverifiable.map((w) => `"${w}"`).join(', ')} asks about the writer's mind, which the response text cannot show.`,
        suggestion: 'Ask about what the response says or does (e.g. "explains why" instead of "understands why").',
      });
    }

    for (let j = 0; j < k; j++) {
      const other = criteria[j];
      const sameRule = rule && isRuleCriterion(other) && canonicalJson(rule) === canonicalJson(other.rule);
      const score = similarity(c.text, other.text);
      if (sameRule || score >= DUPLICATE_SIMILARITY) {
        findings.push({
          code: 'near_duplicate',
          criterion: n,
          message: sameRule
            ? `It checks the same rule as criterion ${j + 1} ("${other.id}"): the check counts twice.`
            : `Its text is ${Math.round(score * 100)}% similar to criterion ${j + 1} ("${other.id}"): the same check would count twice.`,
          suggestion: `Remove it, or merge it into criterion ${j + 1} and add the weights.`,
          fix: { label: 'Remove', replacement: [] },
        });
        break;
      }
    }

    // Dominant: more than two thirds of the positive weight (w_k > 2 × the other positive weights).
    if (c.weight > 0 && positive.length >= 2 && c.weight > 2 * (earn - c.weight)) {
      const others = earn - c.weight;
      findings.push({
        code: 'dominant_weight',
        criterion: n,
        message: `Its weight ${c.weight} is more than twice all other positive criteria together (${others}): meeting it alone earns over two thirds of the reward, meeting everything else under one third.`,
        suggestion: `Lower it to at most ${2 * others}, or raise the others.`,
        fix: { label: `Set weight to ${2 * others}`, replacement: [{ ...c, weight: 2 * others }] },
      });
    }

    if (c.weight < 0 && NEGATED.test(c.text)) {
      const inverse = rule ? invertedRule(rule) : null;
      findings.push({
        code: 'penalty_reads_positive',
        criterion: n,
        message: `It is a pitfall (weight ${c.weight}: being met subtracts), but ${quoteText(c.text)} reads as what a good response does.`,
        suggestion: inverse
          ? 'Describe the bad behaviour in the text (e.g. "Uses jargon"), or keep the text and make it a positive criterion with the inverted rule.'
          : 'Describe the bad behaviour in the text (e.g. "Shouts in capitals"), so the text says what is penalised.',
        ...(inverse ? { fix: { label: 'Make it positive (invert the rule)', replacement: [{ ...c, weight: -c.weight, rule: inverse } as Criterion] } } : {}),
      });
    }

    if (rule) {
      const why = rule.kind === 'length' || rule.kind === 'count' ? boundsMismatch(c.text, rule) : c.weight >= 0 ? polarityMismatch(c.text, rule) : null;
      if (why) {
        const inverse = rule.kind === 'length' || rule.kind === 'count' ? null : invertedRule(rule);
        findings.push({
          code: 'rule_text_mismatch',
          criterion: n,
          message: `The text and the rule disagree: ${why}.`,
          suggestion: 'Change the rule or the text so that both say the same thing.',
          ...(inverse ? { fix: { label: 'Invert the rule', replacement: [{ ...c, rule: inverse } as Criterion] } } : {}),
        });
      }
    }
  });
  return findings;
}
