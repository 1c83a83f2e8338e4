// Judge designs (issue 13; seed 000 #40, #5): how a model judge gives its verdict, and how many
// criteria one judge call sees. Pure: the experiment parser checks a design against the judge
// kind here, the judge factory builds it (src/rl/judgeFactory.ts).
//
//   judge_verdict  logprob_margin  P(yes) read from one next-token distribution (no text, no quote)
//                  generative      the judge writes a verdict line with a quote and a short reason
//                                  (src/rubric/judges/verdictLine.ts), greedy, on our engine
//                  pairwise        two responses of a group in one prompt, "which meets the criterion
//                                  better, A or B?", every pair in both orders; a rollout scores its
//                                  share of wins (src/rubric/pairwiseJudge.ts; self, model, remote)
//   judge_scope    per_criterion   one call per (response, criterion)
//                  checklist       one call per response sees all its judge questions and writes
//                                  one numbered verdict line per criterion
//
// Where each applies: self and model (our engine) take both; the remote endpoint always writes
// text (judge_verdict "generative" makes it use the strict verdict line instead of a bare answer);
// the zero-shot (NLI) pipeline and the rules have neither.
import { isHolistic } from './holistic';
import type { Judge, JudgeRequest } from './judge';

export type JudgeVerdict = 'logprob_margin' | 'generative' | 'pairwise';
export type JudgeScope = 'per_criterion' | 'checklist';

export interface JudgeDesign {
  verdict: JudgeVerdict;
  scope: JudgeScope;
}

export const DEFAULT_JUDGE_DESIGN: JudgeDesign = { verdict: 'logprob_margin', scope: 'per_criterion' };

/** The design of an experiment's config. */
export const judgeDesignOf = (c: { judge_verdict: JudgeVerdict; judge_scope: JudgeScope }): JudgeDesign => ({ verdict: c.judge_verdict, scope: c.judge_scope });

/** Judge kinds whose verdicts are text: they can quote (evidence-required credit) and answer a checklist. */
export function writesVerdicts(judgeKind: string, verdict: JudgeVerdict): boolean {
  // A pairwise verdict is a letter (or the margin of one): it quotes nothing and lists no checklist.
  return verdict !== 'pairwise' && (judgeKind === 'remote' || ((judgeKind === 'self' || judgeKind === 'model') && verdict === 'generative'));
}

/** Why this design cannot run with this judge kind (the config field, and a message naming it), or null. */
export function judgeDesignIssue(design: JudgeDesign, judgeKind: string): { field: 'judge_verdict' | 'judge_scope'; message: string } | null {
  if (design.verdict === 'pairwise' && !['self', 'model', 'remote'].includes(judgeKind)) {
    return { field: 'judge_verdict', message: `judge_verdict "pairwise" needs a model that reads two responses in one prompt (judge self, model or remote); the "${judgeKind}" judge scores one response at a time` };
  }
  if (design.verdict === 'pairwise' && design.scope === 'checklist') {
    return { field: 'judge_scope', message: 'judge_scope "checklist" cannot run with judge_verdict "pairwise": a pairwise prompt compares two responses on one criterion. Use judge_scope "per_criterion"' };
  }
  if (design.verdict === 'generative' && judgeKind === 'probe') {
    // The probe judge (src/rl/probeJudge.ts) reads a hidden state through its fitted weights: it writes nothing.
    return { field: 'judge_verdict', message: 'judge_verdict "generative" cannot run on the probe judge: it scores P(yes) from the judge model\'s hidden state through weights fitted to your labels and writes no text. Use judge self or model' };
  }
  if (design.verdict === 'generative' && (judgeKind === 'rules' || judgeKind === 'zero_shot')) {
    return {
      field: 'judge_verdict',
      message:
        judgeKind === 'rules'
          ? 'judge_verdict "generative" needs a model judge (self, model or remote): with the rules alone no judge writes a verdict'
          : 'judge_verdict "generative" cannot run on the zero-shot judge: an NLI classifier scores entailment and writes no text. Use judge self or model',
    };
  }
  if (design.scope === 'checklist' && !writesVerdicts(judgeKind, design.verdict)) {
    if (judgeKind === 'self' || judgeKind === 'model') {
      return {
        field: 'judge_scope',
        message:
          'judge_scope "checklist" with judge_verdict "logprob_margin" is refused: the P(yes) margin reads one next-token distribution, which answers one question, so one call cannot score a whole checklist. Use judge_verdict "generative" (one verdict line per criterion) or judge_scope "per_criterion"',
      };
    }
    return {
      field: 'judge_scope',
      message: `judge_scope "checklist" needs a judge that writes one verdict line per criterion (self or model with judge_verdict "generative", or a remote endpoint); the "${judgeKind}" judge cannot`,
    };
  }
  return null;
}

const isDefault = (d: JudgeDesign) => d.verdict === DEFAULT_JUDGE_DESIGN.verdict && d.scope === DEFAULT_JUDGE_DESIGN.scope;

/**
 * `judge` asked under `design`: every request carries it (so it reaches a judge in another worker
 * unchanged). The default design leaves the judge as it is.
 */
export function designedJudge(judge: Judge, design: JudgeDesign): Judge {
  if (isDefault(design)) return judge;
  return {
    name: judge.name,
    judge: (requests, options) => judge.judge(requests.map((r) => ({ ...r, design: { ...design } })), options),
  };
}

/** The requests' indices by design (a call normally holds one), for judges that answer each design their own way. */
export function byDesign(requests: readonly JudgeRequest[]): { design: JudgeDesign; items: number[] }[] {
  const groups = new Map<string, { design: JudgeDesign; items: number[] }>();
  requests.forEach((r, i) => {
    const design = r.design ?? DEFAULT_JUDGE_DESIGN;
    const key = `${design.verdict}/${design.scope}`;
    const g = groups.get(key) ?? { design, items: [] };
    g.items.push(i);
    groups.set(key, g);
  });
  return [...groups.values()];
}

/**
 * The call's requests grouped into judge prompts: one each per criterion; in checklist scope, one
 * per response (same rubric version, prompt, completion and quote requirement), the holistic
 * judge always alone (it reads the whole rubric in a prompt of its own).
 */
export function groupAsks(requests: readonly JudgeRequest[], scope: JudgeScope): number[][] {
  if (scope === 'per_criterion') return requests.map((_, i) => [i]);
  // Two rollouts with the same completion are two checklists (a criterion is never listed twice).
  const groups = new Map<string, number[][]>();
  const alone: number[][] = [];
  requests.forEach((r, i) => {
    if (isHolistic(r.criterion)) return alone.push([i]);
    const key = JSON.stringify([r.rubricVersion, r.prompt, r.completion, r.requireQuote === true]);
    const list = groups.get(key) ?? [];
    const open = list.find((g) => g.every((j) => requests[j].criterion.id !== r.criterion.id));
    if (open) open.push(i);
    else list.push([i]);
    groups.set(key, list);
  });
  return [...[...groups.values()].flat(), ...alone];
}

/** Every prompt of a call with its design: byDesign, then groupAsks within each design. */
export function designAsks(requests: readonly JudgeRequest[]): { design: JudgeDesign; items: number[] }[] {
  return byDesign(requests).flatMap(({ design, items }) =>
    groupAsks(
      items.map((i) => requests[i]),
      design.scope,
    ).map((group) => ({ design, items: group.map((k) => items[k]) })),
  );
}
