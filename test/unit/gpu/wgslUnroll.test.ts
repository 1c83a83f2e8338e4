// unrollWgsl: loops over a pipeline-constant bound written out with literal indices (the
// attention row kernels on SwiftShader, which does not unroll them itself).
import { describe, expect, it } from 'vitest';
import { unrollWgsl } from '../../../src/ops/wgslUnroll';

describe('unrollWgsl', () => {
  it('writes each loop out with literal indices, one block per copy, nested braces and comments kept', () => {
    const code = [
      'fn f() {',
      '  for (var d = 0u; d < DH4; d++) { qs[d] = q4[base + d]; }',
      '  for (var j = 0u; j < n; j++) {',
      '    for (var d = 0u; d < DH4; d++) {',
      '      let x = qs[d]; // a comment with a } brace',
      '      if (x.x > 0.0) { acc[d] += x * dd[d]; }',
      '    }',
      '  }',
      '}',
    ].join('\n');
    const out = unrollWgsl(code, 'DH4', 2);
    expect(out).toContain('{ qs[0u] = q4[base + 0u]; } { qs[1u] = q4[base + 1u]; }');
    expect(out).toContain('let x = qs[1u]; // a comment with a } brace');
    expect(out).toContain('if (x.x > 0.0) { acc[1u] += x * dd[1u]; }'); // `dd` is not the counter
    expect(out).toContain('for (var j = 0u; j < n; j++) {'); // other loops stay
    expect(out).not.toMatch(/DH4/);
    const codeOnly = out.replace(/\/\/.*$/gm, '');
    expect(codeOnly.split('{').length).toBe(codeOnly.split('}').length);
  });

  it('refuses a bound no loop uses, a bad count and an unclosed body', () => {
    expect(() => unrollWgsl('for (var d = 0u; d < DH; d++) { }', 'DH4', 4)).toThrow(/no loop bounded by DH4/);
    expect(() => unrollWgsl('for (var d = 0u; d < DH4; d++) { }', 'DH4', 0)).toThrow(/positive integer/);
    expect(() => unrollWgsl('for (var d = 0u; d < DH4; d++) { x[d] = 1.0;', 'DH4', 2)).toThrow(/never closes/);
  });
});
