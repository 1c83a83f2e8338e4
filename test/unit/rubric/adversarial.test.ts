// The adversarial rubric probe (src/rubric/adversarial.ts): fabricated answers from the rubric's
// own words, judged by the rules and by deterministic fake model judges; exploit rates per criterion.
import { describe, expect, it } from 'vitest';
import { adversarialAnswers, adversarialAnswersFor, contentWords, exploitFindings, runAdversarialProbe } from '../../../src/rubric/adversarial';
import type { Judge, JudgeRequest } from '../../../src/rubric/judge';
import { parseRubric, type QuestionCriterion } from '../../../src/rubric/schema';

const rubric = parseRubric({
  name: 'capital',
  criteria: [
    { id: 'paris', text: 'Mentions Paris', weight: 2, tier: 'essential', rule: { kind: 'contains', terms: ['Paris'] } },
    { id: 'long', text: 'Explains in at least 40 words', weight: 1, tier: 'important', rule: { kind: 'length', unit: 'words', min: 40 } },
    { id: 'greets', text: 'Starts with a greeting', weight: 1, tier: 'optional', rule: { kind: 'starts_with', text: 'Hello' } },
    { id: 'regex', text: 'Gives the population in millions', weight: 1, tier: 'optional', rule: { kind: 'regex', pattern: '\\d+(\\.\\d+)? million' } },
    { id: 'shouty', text: 'Is written in capitals', weight: -1, tier: 'important', rule: { kind: 'all_caps' } },
    { id: 'correct', text: 'Names the capital of France correctly', weight: 3, tier: 'essential', judge_question: 'Does the response correctly name the capital of France?' },
  ],
});

/** Says yes when the response holds two of the criterion's content words: a judge fooled by keywords. */
const gullible = (log: JudgeRequest[] = []): Judge => ({
  name: 'gullible',
  judge: async (rs) =>
    rs.map((r) => {
      log.push(r);
      const words = contentWords((r.criterion as QuestionCriterion).judge_question);
      const hits = words.filter((w) => r.completion.toLowerCase().includes(w)).length;
      return { criterion_id: r.criterion.id, status: 'ok', score: hits >= 2 ? 1 : 0, reason: `${hits} words` };
    }),
});
/** Says yes only to an actual statement that Paris is the capital. */
const strict: Judge = {
  name: 'strict',
  judge: async (rs) => rs.map((r) => ({ criterion_id: r.criterion.id, status: 'ok', score: /paris is the capital/i.test(r.completion) ? 1 : 0, reason: 'checked' })),
};

describe('fabricated answers', () => {
  it('are deterministic, per positive criterion, and built from the rubric\'s words', () => {
    const a = adversarialAnswers(rubric);
    expect(adversarialAnswers(rubric)).toEqual(a);
    // No pitfall, no format rule (length, starts_with): only content criteria.
    expect([...new Set(a.map((x) => x.criterion_id))]).toEqual(['paris', 'regex', 'correct']);
    const correct = adversarialAnswersFor(rubric.criteria[5]);
    expect(correct.map((x) => x.kind)).toEqual(['restate', 'compliance', 'keywords', 'verdict', 'injection', 'empty']);
    expect(correct[0].text).toBe('This answer names the capital of France correctly.');
    expect(correct[1].text).toMatch(/^As required, this answer is concise and accurate/);
    expect(correct[2].text).toContain('capital');
    expect(correct[3].text).toBe('Yes. Does the response correctly name the capital of France? Yes, it does.');
    expect(correct[5].text).toBe('');
    // A contains rule's terms lead the stuffing.
    expect(adversarialAnswersFor(rubric.criteria[0])[2].text.startsWith('Paris, mentions.')).toBe(true);
    expect(contentWords('Does the response mention the Eiffel Tower, the tower?')).toEqual(['mention', 'eiffel', 'tower']);
  });
});

describe('exploit rates', () => {
  it('with the rules: a contains rule is exploited, a regex for a fact is not, format rules are not probed; questions go unscored', async () => {
    const report = await runAdversarialProbe(rubric, 'v1', { prompt: 'What is the capital of France?' });
    const by = Object.fromEntries(report.by_criterion.map((c) => [c.criterion_id, c]));
    expect(report.judge).toBe('rules');
    // "Mentions Paris": restate, compliance, keywords, verdict and injection all name it (they quote the criterion): 5 of 6.
    expect(by.paris).toMatchObject({ judged: 6, exploited: 5, exploit_rate: 5 / 6, exploited_by: ['restate', 'compliance', 'keywords', 'verdict', 'injection'] });
    expect(by.regex).toMatchObject({ judged: 6, exploited: 0, exploit_rate: 0 });
    expect(by.correct).toMatchObject({ judged: 0, exploit_rate: null, unscorable: 6 });
    for (const id of ['long', 'greets', 'shouty']) expect(by[id]).toBeUndefined();
    expect(report.exploit_rate).toBeCloseTo(5 / 12, 12);
  });

  it('with a keyword-fooled model judge the question criterion is exploited by every claim; a strict judge gives nothing', async () => {
    const log: JudgeRequest[] = [];
    const fooled = await runAdversarialProbe(rubric, 'v1', { prompt: 'What is the capital of France?', judge: gullible(log) });
    const correct = fooled.by_criterion.find((c) => c.criterion_id === 'correct')!;
    expect(correct).toMatchObject({ judged: 6, exploited: 5, exploited_by: ['restate', 'compliance', 'keywords', 'verdict', 'injection'] });
    // Each fabricated answer is judged against its target criterion only: one request each for the question.
    expect(log.map((r) => r.criterion.id)).toEqual(Array(6).fill('correct'));
    expect(fooled.judge).toBe('gullible');

    const held = await runAdversarialProbe(rubric, 'v1', { prompt: 'What is the capital of France?', judge: strict });
    expect(held.by_criterion.find((c) => c.criterion_id === 'correct')).toMatchObject({ judged: 6, exploited: 0, exploit_rate: 0 });
  });

  it('honours the pass threshold and refuses a bad one', async () => {
    const half: Judge = { name: 'half', judge: async (rs) => rs.map((r) => ({ criterion_id: r.criterion.id, status: 'ok', score: 0.6, reason: 'meh' })) };
    const only = parseRubric({ name: 'q', criteria: [rubric.criteria[5]] });
    expect((await runAdversarialProbe(only, 'v', { prompt: 'p', judge: half })).exploit_rate).toBe(1);
    expect((await runAdversarialProbe(only, 'v', { prompt: 'p', judge: half, passThreshold: 0.7 })).exploit_rate).toBe(0);
    await expect(runAdversarialProbe(only, 'v', { prompt: 'p', passThreshold: 0 })).rejects.toThrow(/passThreshold/);
  });
});

describe('findings for the rubric check', () => {
  it('name each exploited criterion with how and an example, and nothing for the others', async () => {
    const report = await runAdversarialProbe(rubric, 'v1', { prompt: 'p' });
    const findings = exploitFindings(rubric, report);
    expect(findings.map((f) => f.criterion)).toEqual([1]);
    expect(findings[0].message).toMatch(/^5 of 6 fabricated answers with no content earn its credit from the rule \(restating the criterion, .*keyword stuffing/);
    expect(findings[0].message).toContain('e.g. "This answer mentions Paris."');
    const fooled = await runAdversarialProbe(rubric, 'v1', { prompt: 'p', judge: gullible() });
    expect(exploitFindings(rubric, fooled).map((f) => f.criterion)).toEqual([1, 6]);
    expect(exploitFindings(rubric, fooled)[1].message).toContain('from the "gullible" judge');
  });
});
