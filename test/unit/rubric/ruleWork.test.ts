// The per-response bound on regex work (issue 19): a rubric whose regex rules could cost more than
// MAX_REGEX_WORK on one response is refused, naming the costliest criteria as the page numbers them.
import { describe, expect, it } from 'vitest';
import { parseRubric, RubricError } from '../../../src/rubric';
import { rubricRegexWork } from '../../../src/rubric/schema';
import { compileSafeRegex, MAX_REGEX_WORK, regexWork } from '../../../src/rubric/safeRegex';

const regexCriterion = (id: string, pattern: string, max_input_chars?: number) => ({
  id,
  text: id,
  weight: 1,
  tier: 'optional',
  rule: { kind: 'regex', pattern, ...(max_input_chars === undefined ? {} : { max_input_chars }) },
});

function issuesOf(json: unknown) {
  try {
    parseRubric(json);
  } catch (e) {
    expect(e).toBeInstanceOf(RubricError);
    return (e as RubricError).issues;
  }
  throw new Error('the rubric was accepted');
}

describe('regex work bound', () => {
  it('refuses 100 large patterns at max_input_chars 100000 (the page-freezing link), naming criteria 1-based', () => {
    const criteria = Array.from({ length: 100 }, (_, i) => regexCriterion(`r${i}`, '\\w{0,498}\\W', 100_000));
    const issues = issuesOf({ name: 'slow', criteria });
    expect(issues).toHaveLength(1);
    expect(issues[0].path).toBe('criteria');
    expect(issues[0].message).toContain('criterion 1 ("r0")');
    expect(issues[0].message).toContain('and 97 more');
    expect(issues[0].message).toContain('max_input_chars');
    expect(issues[0].message).toContain(MAX_REGEX_WORK.toLocaleString('en-US'));
  });

  it('names the costliest criterion first, not the first in order', () => {
    const issues = issuesOf({ name: 'x', criteria: [regexCriterion('cheap', 'a'), regexCriterion('big', '\\w{0,498}\\W', 100_000)] });
    expect(issues[0].message).toMatch(/Costliest: criterion 2 \("big"\), criterion 1 \("cheap"\)\./);
  });

  it('accepts the same patterns within the bound: one large pattern at the default 10,000 characters, many small ones', () => {
    expect(() => parseRubric({ name: 'x', criteria: [regexCriterion('big', '\\w{0,498}\\W')] })).not.toThrow();
    const small = Array.from({ length: 100 }, (_, i) => regexCriterion(`s${i}`, 'hello|world', 10_000));
    const rubric = parseRubric({ name: 'x', criteria: small });
    const work = rubricRegexWork(rubric);
    expect(work.parts).toHaveLength(100);
    expect(work.total).toBeLessThanOrEqual(MAX_REGEX_WORK);
    expect(work.total).toBe(100 * regexWork(compileSafeRegex('hello|world'), 10_000));
  });

  it('accepts a pattern sized to the bound, refuses it at 100,000 characters next to a cheap one', () => {
    const size = compileSafeRegex('\\w{0,498}\\W').re2.programSize();
    expect(size).toBeGreaterThan(1);
    const at = Math.floor(MAX_REGEX_WORK / size);
    expect(() => parseRubric({ name: 'x', criteria: [regexCriterion('a', '\\w{0,498}\\W', Math.min(at, 100_000))] })).not.toThrow();
    const two = [regexCriterion('a', '\\w{0,498}\\W', 100_000), regexCriterion('b', 'x', 1)];
    expect(issuesOf({ name: 'x', criteria: two })[0].message).toContain('criterion 1 ("a")');
  });

  it('caches compiled patterns and rejections (the builder re-validates on every keystroke)', () => {
    expect(compileSafeRegex('\\w{0,400}z', 'i')).toBe(compileSafeRegex('\\w{0,400}z', 'i'));
    expect(() => compileSafeRegex('(a+)+')).toThrow(/nested quantifier/);
    expect(() => compileSafeRegex('(a+)+')).toThrow(/nested quantifier/);
  });
});
