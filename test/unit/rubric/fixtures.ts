// Builders for rubric tests: parsed through parseRubric, so defaults are filled as in real use.
import { parseRubric, type Rubric, type Rule, type Tier } from '../../../src/rubric/schema';
import { checkRule, type RuleContext, type RuleOutcome } from '../../../src/rubric/rules';

/** One parsed rule (defaults filled in). */
export function rule(raw: Record<string, unknown>): Rule {
  const rubric = parseRubric({ name: 't', criteria: [{ id: 'c', text: 't', weight: 1, tier: 'essential', rule: raw }] });
  return (rubric.criteria[0] as { rule: Rule }).rule;
}

/** Runs a raw rule on a completion. */
export function check(raw: Record<string, unknown>, completion: string, ctx?: RuleContext): RuleOutcome {
  return checkRule(rule(raw), completion, ctx);
}

/** A rubric of rule-less criteria (judge questions) with the given weights and tiers, ids c0, c1, ... */
export function weighted(spec: readonly [weight: number, tier: Tier][]): Rubric {
  return parseRubric({
    name: 'weights',
    criteria: spec.map(([weight, tier], k) => ({ id: `c${k}`, text: `criterion ${k}`, weight, tier, judge_question: `Is ${k} met?` })),
  });
}
