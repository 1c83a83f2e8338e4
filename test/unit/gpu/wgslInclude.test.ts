// The WGSL text include (src/ops/wgslInclude.ts) and the AdamW kernels that share their update
// arithmetic through it (shaders/adamw_update.wgsl). Bit-identical results on the GPU are checked
// by test/browser/optimizer.test.ts; this checks the text each kernel is compiled from.
import { describe, expect, it } from 'vitest';
import { includeWgsl } from '../../../src/ops/wgslInclude';
import { adamwShader } from '../../../src/ops/adamw';
import updateCode from '../../../shaders/adamw_update.wgsl?raw';

describe('WGSL include', () => {
  it('replaces each marker line (indented too) with the file, leaves other lines alone', () => {
    const code = ['const A: u32 = 1u;', '// INCLUDE f.wgsl', 'fn g() {}', '  // INCLUDE f.wgsl', '// INCLUDE is a word here too'].join('\n');
    expect(includeWgsl(code, { 'f.wgsl': 'fn f() -> u32 { return A; }\n' }).split('\n')).toEqual([
      'const A: u32 = 1u;',
      'fn f() -> u32 { return A; }',
      'fn g() {}',
      'fn f() -> u32 { return A; }',
      '// INCLUDE is a word here too',
    ]);
    // `$` in the included text is not a replacement pattern.
    expect(includeWgsl('// INCLUDE d.wgsl', { 'd.wgsl': "let x = '$&$1';" })).toBe("let x = '$&$1';");
  });

  it('names a missing file, and a given file the shader never includes (a mistyped marker)', () => {
    expect(() => includeWgsl('// INCLUDE g.wgsl', { 'f.wgsl': '' })).toThrow('WGSL include: no file g.wgsl given');
    expect(() => includeWgsl('// INCLUDE  f.wgsl\n', { 'f.wgsl': 'x' })).toThrow('never includes f.wgsl');
  });

  it('the three AdamW kernels carry the one shared update function, and no other copy of its arithmetic', () => {
    const fn = updateCode.slice(updateCode.indexOf('fn update('));
    expect(fn).toContain('params.one_minus_beta2 * g * g');
    for (const kernel of ['adamw', 'adamw_multi', 'adamw_moments'] as const) {
      const code = adamwShader(kernel);
      expect(code, kernel).toContain(fn.trimEnd());
      expect(code.split('fn update(').length - 1, kernel).toBe(1);
      expect(code.split('bias_correction2_sqrt + params.eps').length - 1, kernel).toBe(1);
      expect(code, kernel).not.toMatch(/^\s*\/\/ INCLUDE \S+\s*$/m); // no marker left over
    }
  });
});
