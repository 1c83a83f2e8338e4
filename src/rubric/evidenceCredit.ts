// Evidence-required credit and the vacuous-credit probe (issue 13; seed 000 §2F/§3.6: a judge
// that must point at the words it credits is harder to talk into a pass).
//
// The rule, exactly:
//   Every request reaching the model judge asks it to quote the response (requireQuote: the
//   prompt's "Quote:" line, modelJudgePrompt.ts). A verdict needs evidence when it gives credit:
//   status 'ok', score > 0, on a criterion of weight > 0. Its evidence is a quote the judge wrote
//   that quoteMatch.ts finds in the response (whitespace, case, NFC/NFKC, quotation-mark variants
//   tolerated; a quote that is not there counts as none), i.e. the result's spans.
//     - with spans:    the verdict stands           evidence: 'quoted'
//     - without spans: the score becomes 0           evidence: 'withheld' (the reason says why)
//   Pitfalls (weight < 0) and weight-0 criteria are left alone: withholding a pitfall's verdict
//   would reward the response, not withhold credit.
//   The vacuous-credit probe (probe: true): each 'quoted' verdict is judged again on the response
//   with its quoted spans deleted. If the re-judged score is still >= the original score, the
//   pass survived without its evidence: it is flagged (probe: 'survived', counted per criterion
//   per step); if it fell, probe: 'fell'; a failed re-judgement, probe: 'unscorable'. A flag
//   is a measurement: the verdict's score is not changed by the probe.
//
// Judges that score P("yes") from a next-token distribution (self and model with judge_verdict
// "logprob_margin", zero-shot) write no text and so never quote: under evidence-required credit
// every pass of theirs is withheld. The experiment parser refuses that combination
// (evidenceJudgeIssue) rather than train on zeros; with judge_verdict "generative" self and model
// write a verdict line with a quote (src/rubric/judges/verdictLine.ts) and qualify.
import { normaliseSpans, type Span } from './evidence';
import type { CriterionResult, Judge, JudgeOptions, JudgeRequest } from './judge';
import type { Rubric } from './schema';
import { writesVerdicts, type JudgeVerdict } from './judgeDesign';

export type EvidenceMark = 'quoted' | 'withheld';
export type ProbeOutcome = 'survived' | 'fell' | 'unscorable';

/** A result as evidence-required credit leaves it. */
export type EvidenceResult = CriterionResult & { evidence?: EvidenceMark; probe?: ProbeOutcome };

export interface EvidenceCreditOptions {
  /** Run the vacuous-credit probe on every quoted pass (one more judge request each). */
  probe: boolean;
}

/** The response with `spans` deleted (what the probe shows the judge). */
export function deleteSpans(text: string, spans: readonly Span[]): string {
  let out = '';
  let at = 0;
  for (const s of normaliseSpans(spans)) {
    out += text.slice(at, s.start);
    at = s.end;
  }
  return out + text.slice(at);
}

const needsEvidence = (request: JudgeRequest, result: CriterionResult): result is CriterionResult & { status: 'ok' } =>
  result.status === 'ok' && result.score > 0 && request.criterion.weight > 0;

/**
 * `judge` under evidence-required credit (the rule above). Same contract as any Judge: one result
 * per request, in order; a judge that rejects makes this call reject.
 */
export function evidenceRequiredJudge(judge: Judge, options: EvidenceCreditOptions): Judge {
  return {
    name: judge.name,
    async judge(requests: readonly JudgeRequest[], judgeOptions: JudgeOptions = {}): Promise<CriterionResult[]> {
      const asked = requests.map((r) => ({ ...r, requireQuote: true }));
      const raw = await judge.judge(asked, judgeOptions);
      if (!Array.isArray(raw) || raw.length !== requests.length) return raw; // judgeRollouts reports the mismatch
      const out: EvidenceResult[] = raw.map((result, i) => {
        if (!result || !needsEvidence(requests[i], result)) return result;
        const n = requests[i].completion.length;
        const inText = (result.spans ?? []).filter((sp) => Number.isInteger(sp?.start) && Number.isInteger(sp?.end) && sp.start >= 0 && sp.start < sp.end && sp.end <= n);
        if (inText.length) return { ...result, spans: normaliseSpans(inText), evidence: 'quoted' };
        return {
          ...result,
          score: 0,
          reason: `${result.reason} — credit withheld: evidence required, and the judge quoted nothing found in the response`,
          evidence: 'withheld',
        };
      });
      if (!options.probe) return out;
      const probed = out.flatMap((r, i) => (r?.evidence === 'quoted' && r.status === 'ok' ? [i] : []));
      if (probed.length === 0) return out;
      let again: CriterionResult[] | null = null;
      try {
        again = await judge.judge(
          probed.map((i) => ({ ...asked[i], completion: deleteSpans(requests[i].completion, (out[i] as { spans?: Span[] }).spans ?? []) })),
          { signal: judgeOptions.signal },
        );
      } catch (e) {
        if (judgeOptions.signal?.aborted) throw e;
      }
      probed.forEach((i, j) => {
        const first = out[i] as EvidenceResult & { status: 'ok' };
        const second = Array.isArray(again) && again.length === probed.length ? again[j] : undefined;
        const outcome: ProbeOutcome =
          !second || second.status !== 'ok' || typeof second.score !== 'number' ? 'unscorable' : second.score >= first.score ? 'survived' : 'fell';
        out[i] = {
          ...first,
          probe: outcome,
          ...(outcome === 'survived' ? { reason: `${first.reason} — vacuous-credit probe: the pass survived deleting the quoted words` } : {}),
        };
      });
      return out;
    },
  };
}

/**
 * The run's judges under the options: the trained rubric's judge wrapped when
 * judge_evidence_required is on, the held-out (gold) rubric's the bare judge (a clean reference).
 */
export function evidenceJudges(
  judge: Judge | undefined,
  config: { judge_evidence_required: boolean; vacuous_credit_probe: boolean },
): { modelJudge: Judge | undefined; heldOutJudge?: Judge } {
  if (!judge || !config.judge_evidence_required) return { modelJudge: judge };
  return { modelJudge: evidenceRequiredJudge(judge, { probe: config.vacuous_credit_probe }), heldOutJudge: judge };
}

/** Per criterion, one step's evidence-required credit. */
export interface CriterionEvidence {
  /** Verdicts that needed evidence (credit on a positive criterion, before any was withheld). */
  passes: number;
  quoted: number;
  withheld: number;
  /** Quoted passes the probe re-judged, and of them those that survived deleting their quote (flagged) or fell. */
  probed: number;
  vacuous: number;
  fell: number;
}

export interface EvidenceMetrics {
  /** By criterion id, in rubric order; criteria with no verdict needing evidence are absent. */
  by_criterion: Record<string, CriterionEvidence>;
  passes: number;
  withheld: number;
  probed: number;
  vacuous: number;
}

const zero = (): CriterionEvidence => ({ passes: 0, quoted: 0, withheld: 0, probed: 0, vacuous: 0, fell: 0 });

/** The step's counts, from the results of its rollouts (results without marks count nothing). */
export function evidenceMetrics(rubric: Rubric, results: readonly (readonly EvidenceResult[])[]): EvidenceMetrics {
  const by = new Map<string, CriterionEvidence>(rubric.criteria.map((c) => [c.id, zero()]));
  for (const row of results) {
    for (const r of row) {
      if (r.evidence === undefined) continue;
      const m = by.get(r.criterion_id);
      if (!m) continue;
      m.passes++;
      if (r.evidence === 'quoted') m.quoted++;
      else m.withheld++;
      if (r.probe !== undefined && r.probe !== 'unscorable') m.probed++;
      if (r.probe === 'survived') m.vacuous++;
      if (r.probe === 'fell') m.fell++;
    }
  }
  const by_criterion: Record<string, CriterionEvidence> = {};
  const total = { passes: 0, withheld: 0, probed: 0, vacuous: 0 };
  for (const [id, m] of by) {
    if (m.passes === 0) continue;
    by_criterion[id] = m;
    total.passes += m.passes;
    total.withheld += m.withheld;
    total.probed += m.probed;
    total.vacuous += m.vacuous;
  }
  return { by_criterion, ...total };
}

/** Judge kinds that write their verdict as text and so can quote whatever the design (the remote endpoint). */
export const QUOTING_JUDGE_KINDS: readonly string[] = ['remote'];

/** Why evidence-required credit cannot work with this judge kind and verdict design, or null. */
export function evidenceJudgeIssue(evidenceRequired: boolean, judgeKind: string, verdict: JudgeVerdict = 'logprob_margin'): string | null {
  if (!evidenceRequired || writesVerdicts(judgeKind, verdict)) return null;
  if (verdict === 'pairwise') return 'judge_evidence_required cannot run with judge_verdict "pairwise": the pairwise judge names the better of two responses (A or B) and quotes neither, so every pass would be withheld. Use judge_verdict "generative"';
  if (judgeKind === 'rules') return 'judge_evidence_required needs a model judge that quotes the response (a remote endpoint, or self/model with judge_verdict "generative"): with the rules alone there is no judge verdict to check';
  if (judgeKind === 'self' || judgeKind === 'model') {
    return `judge_evidence_required needs a judge that writes its verdict and a quote: the "${judgeKind}" judge with judge_verdict "logprob_margin" scores P("yes") from one next-token distribution and writes no quote, so every pass would be withheld. Use judge_verdict "generative"`;
  }
  return `judge_evidence_required needs a judge that writes its verdict and a quote (a remote endpoint, or self/model with judge_verdict "generative"): the "${judgeKind}" judge scores P("yes") and writes no quote, so every pass would be withheld`;
}
