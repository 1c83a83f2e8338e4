// The safe regex layer: static rejection of unsafe or ambiguous patterns, linear-time matching on
// re2js, agreement with JavaScript's RegExp (same match position and length) on random patterns
// from the subset where RE2 and JavaScript agree, and RE2's documented behaviour where they differ.
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

/** Whether offset i falls between the two halves of a surrogate pair. */
function insidePair(s: string, i: number): boolean {
  return i > 0 && /[\uD800-\uDBFF]/.test(s[i - 1]) && /[\uDC00-\uDFFF]/.test(s[i] ?? '');
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
    expect(rejection('(a+)+$')).toMatch(/^nested quantifier: "\(a\+\)\+" repeats "a\+", which backtracks catastrophically .* rewrite it/);
    expect(rejection('(?:\\w*,)*')).toMatch(/nested quantifier: "\(\?:\\w\*,\)\*" repeats "\\w\*"/);
    expect(rejection('(x?){3}')).toMatch(/nested quantifier/);
    expect(rejection('((ab)*c)+')).toMatch(/nested quantifier: "\(\(ab\)\*c\)\+" repeats "\(ab\)\*"/);
    expect(rejection('(?:(?:a+)?)+')).toMatch(/nested quantifier: "\(\?:\(\?:a\+\)\?\)\+" repeats "\(\?:a\+\)\?"/);
    expect(rejection('x(?<n>[ab]{1,3})+')).toMatch(/nested quantifier/);
  });

  it('accepts fixed counts inside repeats, variable quantifiers under an optional group, and alternation', () => {
    expect(() => compileSafeRegex('(a{2})+')).not.toThrow();
    expect(() => compileSafeRegex('\\d+(\\.\\d+)?')).not.toThrow();
    expect(() => compileSafeRegex('(cat|dog)+')).not.toThrow();
    expect(() => compileSafeRegex('[(+*]+(a)*')).not.toThrow(); // brackets in a class are not groups
    expect(() => compileSafeRegex('\\(a+\\)+')).not.toThrow(); // escaped parentheses are not groups
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
    expect(rejection('a\\01')).toMatch(/octal escapes/);
  });

  it('rejects what RE2 lacks, with its message, and programs too large to run fast', () => {
    expect(rejection('a{1001}')).toBe('not supported by the RE2 engine: invalid repeat count: `{1001}` (counts go up to 1000, nested counts multiplied)');
    expect(rejection('(?:a{100}){100}')).toMatch(/^not supported by the RE2 engine: invalid repeat count/);
    expect(rejection('[\\b]')).toMatch(/^not supported by the RE2 engine: invalid escape sequence/);
    expect(rejection('\\p{Script=Greek}', 'u')).toMatch(/^not supported by the RE2 engine: /);
    expect(rejection('\\w{0,600}\\W')).toBe('pattern is too large once counted repetitions are expanded (1203 RE2 instructions, limit 1000)');
    expect(() => compileSafeRegex('\\w{0,400}\\W')).not.toThrow();
  });

  it('rejects escapes that JavaScript and RE2 would read differently', () => {
    expect(rejection('\\p{L}')).toMatch(/^"\\p\{\.\.\.\}" at 0 needs the u flag/); // JavaScript: "p{L}"
    expect(rejection('x\\u{41}')).toMatch(/^"\\u\{\.\.\.\}" at 1 needs the u flag/); // JavaScript: 41 u's
    expect(rejection('[\\P{L}]')).toMatch(/needs the u flag/);
    expect(rejection('\\uD83D\\uDE00', 'u')).toMatch(/^surrogate escape "\\uD83D" at 0/);
    expect(rejection('\\a')).toMatch(/^escape "\\a" at 0 is not supported \(JavaScript reads it as "a"/); // RE2: bell
    expect(rejection('x\\z')).toMatch(/escape "\\z" at 1/); // RE2: end of text
    expect(rejection('\\x{41}')).toMatch(/escape "\\x" at 0/); // JavaScript: 41 x's, RE2: "A"
    expect(rejection('[\\e]')).toMatch(/escape "\\e"/);
    expect(rejection('[[:digit:]]')).toMatch(/^"\[:" at 1 inside a character class reads as a POSIX class in RE2/);
    expect(rejection('\\c1')).toMatch(/unsupported escape "\\c"/);
    expect(rejection('(?i:a)(?P<x>b)')).toMatch(/^invalid regular expression|^unsupported group syntax "\(\?i:" at 0/);
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
      ['[😀é]', 'x😀', 'u'],
      ['a*?b', 'aaab', ''],
      ['(?:x|xy)z', 'xyz', ''],
      ['ß', 'SS ß', 'i'],
      ['é', 'É', 'i'],
      ['\\u{1F600}', '😀', 'u'],
      ['\\u00e9|\\x41|\\cJ|\\0', 'xé', ''],
      ['a{2,3}', 'aaaa', ''],
      ['a{2,}?', 'aaaa', ''],
      ['x{', 'x{', ''],
      ['a{,3}', 'a{,3}', ''],
      ['$', 'abc', ''],
      ['$', 'abc\n', ''],
      ['(\\b)*a', ' a', ''],
      ['.*a.*b.*c', 'xxaxxbxxc', ''],
      ['(?<year>\\d{4})-\\d\\d', 'on 2024-05', ''],
      ['[]a|[^]', 'xa', ''],
      ['a\\/b\\.', 'a/b.', ''],
      ['(?:a|)+', 'aa', ''],
      ['\\w+', 'ſK', 'iu'],
    ];
    for (const [p, input, flags] of cases) expect(search(p, input, flags), `/${p}/${flags} on ${JSON.stringify(input)}`).toEqual(native(p, input, flags));
  });

  it('differs from RegExp exactly where the module header says', () => {
    // [pattern, input, flags, RE2's match, JavaScript's match]
    const cases: [string, string, string, [number, number] | null, [number, number] | null][] = [
      ['.', '😀', '', [0, 2], [0, 1]], // code points, as with the u flag
      ['[😀]', 'x😀', '', [1, 3], [1, 2]],
      ['ß', 'ẞ', 'i', [0, 1], null], // Unicode case folding, as with the u flag
      ['.', '\r', '', [0, 1], null], // `.` excludes only \n
      ['a$', 'a\r\n', 'm', null, [0, 1]], // lines end only at \n
      ['^b', 'a\u2028b', 'm', null, [2, 3]],
      ['\\s', '\v\u00a0', '', null, [0, 1]], // ASCII \s
      ['(?:|a)+', 'aa', '', [0, 0], [0, 2]], // empty iterations
      ['(?:a*|b)?', 'b', '', [0, 0], [0, 1]],
    ];
    for (const [p, input, flags, ours, theirs] of cases) {
      const label = `/${p}/${flags} on ${JSON.stringify(input)}`;
      expect(search(p, input, flags), label).toEqual(ours);
      expect(native(p, input, flags), label).toEqual(theirs);
    }
    // With the u flag JavaScript agrees on the first three.
    expect(native('.', '😀', 'u')).toEqual([0, 2]);
    expect(native('ß', 'ẞ', 'iu')).toEqual([0, 1]);
    expect(search('.', '😀', 'u')).toEqual([0, 2]);
    // V8 (Node 20) can put an empty match between the halves of a surrogate pair even with the u
    // flag (/\B/u on "b😀 " at 2); RE2 never splits a character.
    expect(search('\\B', 'b😀 ', 'u')).toEqual([3, 3]);
  });

  it('runs in linear time where the native engine takes cubic or exponential time', () => {
    // .*a.*b.*c on 20,000 "a": about 10^12 backtracking steps natively (24 s at 4,000 measured).
    const t0 = performance.now();
    expect(search('.*a.*b.*c', 'a'.repeat(20000))).toBeNull();
    expect(search('^(a|aa)*$', 'a'.repeat(5000) + 'b')).toBeNull();
    expect(search('^(?:a|a)*$', 'a'.repeat(100000) + 'b')).toBeNull();
    expect(search('[a-z]{0,400}[0-9]', 'a'.repeat(10000) + '5')).toEqual([9600, 10001]);
    expect(performance.now() - t0).toBeLessThan(5000); // generous: a hang would take hours
  });

  it('agrees with RegExp on 3,000 random patterns and inputs from the agreeing subset (position and length)', () => {
    // The subset: inputs without \r, \v, \u2028 or non-ASCII spaces; astral characters only with the u
    // flag; and every repeated or optional group always consumes (each of its alternatives starts
    // with a character that must match), so JavaScript's empty-iteration rule never comes into play.
    // Empty alternatives and assertions still appear at the top level and in plain groups. Matches
    // that V8 reports inside a surrogate pair are skipped (V8's quirk, tested above).
    const rand = rng(7);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
    const atoms = ['a', 'b', '.', '[ab]', '[^a]', '\\w', '\\W', '\\s', ' ', '\\d', '1', 'é', '[^\\s]'];
    const quantifiers = ['', '', '', '*', '+', '?', '{2}', '{1,2}', '{0,}', '*?', '+?', '??'];
    const term = (depth: number): string => {
      const r = rand();
      if (r < 0.1) return pick(['^', '$', '\\b', '\\B']);
      if (depth > 0 && r < 0.35) {
        const q = pick(quantifiers);
        return `(?:${alternation(depth - 1, q !== '')})${q}`;
      }
      return pick(atoms) + pick(quantifiers);
    };
    const sequence = (depth: number, consumes: boolean) => {
      const head = consumes ? pick(atoms) + pick(['', '+', '{2}', '+?']) : '';
      return head + Array.from({ length: (consumes ? 0 : 1) + Math.floor(rand() * 3) }, () => term(depth)).join('');
    };
    const alternation = (depth: number, consumes: boolean): string => {
      if (rand() >= 0.3) return sequence(depth, consumes);
      const second = !consumes && rand() < 0.3 ? '' : sequence(depth, consumes);
      return `${sequence(depth, consumes)}|${second}`;
    };
    let compared = 0;
    for (let trial = 0; trial < 3000; trial++) {
      const pattern = alternation(2, false);
      if (pattern.length > 200) continue;
      const flags = pick(['', 'i', 'm', 's', 'ms', 'u', 'iu', 'imsu']);
      let re;
      try {
        re = compileSafeRegex(pattern, flags);
      } catch (e) {
        if (e instanceof RegexRejected && /nested quantifier|too large/.test(e.message)) continue;
        throw e;
      }
      const chars = ['a', 'b', 'A', ' ', '\n', '1', '_', 'é', 'É', ...(flags.includes('u') ? ['😀'] : [])];
      const input = Array.from({ length: Math.floor(rand() * 9) }, () => pick(chars)).join('');
      const ours = safeRegexSearch(re, input);
      const theirs = native(pattern, input, flags);
      if (theirs && insidePair(input, theirs[0])) continue; // V8's quirk, see above
      expect(ours && [ours.index, ours.end], `/${pattern}/${flags} on ${JSON.stringify(input)}`).toEqual(theirs);
      compared++;
    }
    expect(compared).toBeGreaterThan(1500);
  });
});
