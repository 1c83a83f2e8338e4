// The safe regex engine: static rejection of unsafe patterns, linear-time matching, and
// agreement with JavaScript's RegExp (same match position and length) on random patterns.
import { describe, expect, it } from 'vitest';
import { compileSafeRegex, safeRegexSearch, RegexRejected } from '../../../src/rubric/safeRegex';
import { rng } from '../../helpers/random';

function search(pattern: string, input: string, flags = ''): [number, number] | null {
  const m = safeRegexSearch(compileSafeRegex(pattern, flags), input);
  return m && [m.index, m.end];
}

function native(pattern: string, input: string, flags = ''): [number, number] | null {
  const m = new RegExp(pattern, flags).exec(input);
  return m && [m.index, m.index + m[0].length];
}

function rejection(pattern: string, flags = ''): string {
  try {
    compileSafeRegex(pattern, flags);
  } catch (e) {
    expect(e).toBeInstanceOf(RegexRejected);
    return (e as Error).message;
  }
  throw new Error(`${pattern} was accepted`);
}

describe('safe regex: static checks', () => {
  it('rejects nested quantifiers, naming both parts', () => {
    expect(rejection('(a+)+$')).toMatch(/nested quantifier: "\(a\+\)\+" repeats "a\+"/);
    expect(rejection('(?:\\w*,)*')).toMatch(/nested quantifier/);
    expect(rejection('(x?){3}')).toMatch(/nested quantifier/);
    expect(rejection('((ab)*c)+')).toMatch(/nested quantifier/);
  });

  it('accepts fixed counts inside repeats and variable quantifiers under an optional group', () => {
    expect(() => compileSafeRegex('(a{2})+')).not.toThrow();
    expect(() => compileSafeRegex('\\d+(\\.\\d+)?')).not.toThrow();
    expect(() => compileSafeRegex('(cat|dog)+')).not.toThrow();
  });

  it('rejects invalid syntax with the engine message, bad flags, long patterns and unsupported features', () => {
    expect(rejection('a(b')).toMatch(/^invalid regular expression: .*/);
    expect(rejection('a', 'g')).toBe('flag "g" is not allowed (allowed: i, m, s, u)');
    expect(rejection('a', 'ii')).toBe('flag "i" is repeated');
    expect(rejection('a'.repeat(201))).toBe('pattern is 201 characters long (limit 200)');
    expect(rejection('(a)\\1')).toMatch(/backreferences/);
    expect(rejection('(?<x>a)\\k<x>')).toMatch(/named backreferences/);
    expect(rejection('a(?=b)')).toMatch(/lookahead and lookbehind/);
    expect(rejection('(?<!b)a')).toMatch(/lookahead and lookbehind/);
    expect(rejection('a{1001}')).toMatch(/repetition count above 1000/);
    expect(rejection('(?:a{100}){100}')).toMatch(/too large/);
  });
});

describe('safe regex: matching', () => {
  it('finds the same match as RegExp on hand cases', () => {
    const cases: [string, string, string][] = [
      ['colou?r', 'The colour red', ''],
      ['^answer:\\s*\\d+$', 'think\nAnswer: 42', 'im'],
      ['\\bcat\\b', 'concat cat', ''],
      ['a.c', 'a\nc abc', ''],
      ['a.c', 'a\nc', 's'],
      ['\\p{Lu}\\p{Ll}+', 'élan Émile', 'u'],
      ['😀+', 'x😀😀y', 'u'],
      ['[😀]', 'x😀', ''],
      ['a*?b', 'aaab', ''],
      ['(?:x|xy)z', 'xyz', ''],
      ['ß', 'SS ß', 'i'],
      ['\\u{1F600}', '😀', 'u'],
      ['\\uD83D\\uDE00', 'a😀', 'u'],
      ['a{2,3}', 'aaaa', ''],
      ['a{2,}?', 'aaaa', ''],
      ['x{', 'x{', ''],
      ['$', 'abc', ''],
      ['(\\b)*a', ' a', ''],
      ['.*a.*b.*c', 'xxaxxbxxc', ''],
    ];
    for (const [p, input, flags] of cases) expect(search(p, input, flags), `${p} on ${JSON.stringify(input)}`).toEqual(native(p, input, flags));
  });

  it('runs in linear time where the native engine takes cubic time', () => {
    // .*a.*b.*c on 20,000 "a": about 10^12 backtracking steps natively (24 s at 4,000 measured).
    const t0 = performance.now();
    expect(search('.*a.*b.*c', 'a'.repeat(20000))).toBeNull();
    expect(search('^(a|aa)*$', 'a'.repeat(5000) + 'b')).toBeNull();
    expect(performance.now() - t0).toBeLessThan(5000); // generous: a hang would take hours
  });

  it('agrees with RegExp on 3,000 random patterns and inputs (position and length)', () => {
    const rand = rng(7);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
    const atoms = ['a', 'b', '.', '[ab]', '[^a]', '\\w', '\\W', '\\s', ' ', '\\d', '1'];
    const quantifiers = ['', '', '', '*', '+', '?', '{2}', '{1,2}', '{0,}', '*?', '+?', '??'];
    const term = (depth: number): string => {
      const r = rand();
      if (r < 0.1) return pick(['^', '$', '\\b', '\\B']);
      if (depth > 0 && r < 0.35) return `(?:${alternation(depth - 1)})${pick(quantifiers)}`;
      return pick(atoms) + pick(quantifiers);
    };
    const sequence = (depth: number) => Array.from({ length: 1 + Math.floor(rand() * 3) }, () => term(depth)).join('');
    // Empty alternatives exercise JavaScript's empty check on quantified groups.
    const alternation = (depth: number): string =>
      rand() < 0.3 ? `${sequence(depth)}|${rand() < 0.3 ? '' : sequence(depth)}` : sequence(depth);
    let compared = 0;
    for (let trial = 0; trial < 3000; trial++) {
      const pattern = alternation(2);
      if (pattern.length > 200) continue;
      const flags = pick(['', 'i', 'm', 's', 'ms', 'u', 'iu']);
      let re;
      try {
        re = compileSafeRegex(pattern, flags);
      } catch (e) {
        if (e instanceof RegexRejected && /nested quantifier/.test(e.message)) continue;
        throw e;
      }
      const input = Array.from({ length: Math.floor(rand() * 9) }, () => pick(['a', 'b', 'A', ' ', '\n', '1', '_'])).join('');
      const ours = safeRegexSearch(re, input);
      expect(ours && [ours.index, ours.end], `/${pattern}/${flags} on ${JSON.stringify(input)}`).toEqual(native(pattern, input, flags));
      compared++;
    }
    expect(compared).toBeGreaterThan(1500);
  });
});
