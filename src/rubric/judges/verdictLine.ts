// Generative verdicts (issue 13, "Judge designs"): a judge that writes its verdict as one line of
// a strict small format, which a tiny model or a chat endpoint can follow and this file parses
// strictly. The line is
//
//   <answer> | quote: "<exact words of the response>" | reason: <a few words>
//
// with `quote: none` when no words apply. <answer> is one of the criterion's choices (case
// ignored, nothing else around it). The quote goes to quoteMatch (through evidence.ts's
// findQuote): found in the response, it becomes the verdict's span, so evidence-required credit
// and the vacuous-credit probe work with any judge that writes this line. Anything else (no
// separator, no quote field, an unknown answer, an empty reason) is no verdict: the criterion is
// unscorable with the reason, never a silent pass or 0.
//
// Whole-checklist judging asks for one such line per criterion, numbered as the prompt numbers
// the criteria ("2. no | quote: none | reason: ..."). Blank lines are skipped; a criterion
// without a line, or with two, is unscorable; a non-blank line that answers no listed number
// means the reply is not in the format, and every criterion of that reply is unscorable.
import { findQuote, type Span } from '../evidence';
import { unscorable, type CriterionResult } from '../judge';

/** The format as the prompts spell it out. */
export const VERDICT_FORMAT = '<answer> | quote: "<exact words of the response>" | reason: <a few words>';

export type ParsedVerdict = { ok: true; choice: number; quote: string | null; reason: string } | { ok: false; reason: string };

/** A line of model output as it may be quoted in a reason: one line, shortened, as JSON. */
export function excerpt(text: string, max = 120): string {
  const flat = text.replace(/\s+/gu, ' ').trim();
  return JSON.stringify(flat.length > max ? `${flat.slice(0, max)}…` : flat);
}

// answer | quote: "…" | reason: …   (the quote greedy: it may hold "|" or quotation marks itself)
const LINE = /^(.*?)\s*\|\s*quote\s*:\s*(none|["“”](.*)["“”])\s*\|\s*reason\s*:(.*)$/isu;

/** One verdict line against the criterion's choices (worst → best). */
export function parseVerdictLine(line: string, choices: readonly string[]): ParsedVerdict {
  const text = line.replace(/\r$/u, '').trim();
  if (text === '') return { ok: false, reason: 'the judge wrote no verdict line (its reply was empty)' };
  if (/[\n\r]/u.test(text)) return { ok: false, reason: `the verdict must be one line; the judge wrote ${excerpt(text)}` };
  const m = LINE.exec(text);
  if (!m) return { ok: false, reason: `the judge's reply ${excerpt(text)} is not a verdict line of the form ${VERDICT_FORMAT}` };
  const answer = m[1].trim().toLowerCase();
  const choice = choices.findIndex((c) => c.trim().toLowerCase() === answer);
  if (choice < 0) return { ok: false, reason: `the judge answered ${excerpt(m[1].trim(), 40)}, which is none of ${JSON.stringify(choices)}` };
  const reason = m[4].trim();
  if (reason === '') return { ok: false, reason: `the judge's verdict line ${excerpt(text)} gives no reason` };
  const quote = m[2].toLowerCase() === 'none' ? null : m[3].trim();
  return { ok: true, choice, quote: quote === '' ? null : quote, reason };
}

export type ChecklistLines = { ok: true; lines: (string | null | { duplicate: true })[] } | { ok: false; reason: string };

const LABEL = /^\s*(\d{1,3})[.)]\s*(.*)$/su;

/**
 * A checklist reply split by criterion number (1..count): each entry the line's verdict text, null
 * when no line answers it, {duplicate} when two do. Not ok when a non-blank line answers no number
 * from 1 to count.
 */
export function splitChecklist(reply: string, count: number): ChecklistLines {
  const lines: (string | null | { duplicate: true })[] = Array.from({ length: count }, () => null);
  for (const raw of reply.replace(/<think>[\s\S]*?<\/think>/giu, '').split('\n')) {
    if (raw.trim() === '') continue;
    const m = LABEL.exec(raw);
    const n = m ? Number(m[1]) : NaN;
    if (!m || !(n >= 1 && n <= count)) {
      return { ok: false, reason: `the judge's line ${excerpt(raw)} answers no criterion numbered 1 to ${count}: the checklist reply is not in the format "<number>. ${VERDICT_FORMAT}"` };
    }
    lines[n - 1] = lines[n - 1] === null ? m[2] : { duplicate: true };
  }
  return { ok: true, lines };
}

/** Per criterion of a checklist reply: its parsed verdict (or why there is none). */
export function parseChecklist(reply: string, choicesByCriterion: readonly (readonly string[])[]): ParsedVerdict[] {
  const split = splitChecklist(reply, choicesByCriterion.length);
  if (!split.ok) return choicesByCriterion.map(() => ({ ok: false, reason: split.reason }));
  return split.lines.map((line, i) => {
    if (line === null) return { ok: false, reason: `the judge's checklist reply has no line for criterion ${i + 1}` };
    if (typeof line !== 'string') return { ok: false, reason: `the judge's checklist reply answers criterion ${i + 1} twice` };
    return parseVerdictLine(line, choicesByCriterion[i]);
  });
}

/**
 * The criterion result of a parsed verdict: score index / (n − 1); the quote, where found in the
 * completion, as the result's span (a quote that is not there is named in the reason, never credited).
 */
export function verdictResult(criterionId: string, choices: readonly string[], completion: string, verdict: ParsedVerdict, prefix = ''): CriterionResult {
  if (!verdict.ok) return unscorable(criterionId, `${prefix}${verdict.reason}`);
  const span: Span | null = verdict.quote === null ? null : findQuote(completion, verdict.quote.slice(0, 2000));
  const quoted = verdict.quote === null ? 'no quote' : span ? `quoted ${excerpt(verdict.quote, 80)}` : `its quote ${excerpt(verdict.quote, 80)} is not in the response`;
  return {
    criterion_id: criterionId,
    status: 'ok',
    score: verdict.choice / (choices.length - 1),
    reason: `${prefix}the judge answered "${choices[verdict.choice]}" (${quoted}); reason: ${excerpt(verdict.reason, 160)}`,
    ...(span ? { spans: [span] } : {}),
  };
}
