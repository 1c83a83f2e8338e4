// The WGSL side of dispatch pairing (src/gpu/wgslPair.ts): reading a kernel's workgroup size
// and memory, renaming the second kernel's module-scope names, and refusing what cannot share a
// dispatch. The pair kernels themselves run in test/browser/dispatchPair.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { KernelSpec } from '../../../src/gpu/pipelineCache';
import { composePair, evaluate, pairableKernel, prefixNames, stripComments, topLevelNames } from '../../../src/gpu/wgslPair';

const LIMITS = { maxStorageBuffersPerShaderStage: 10, maxUniformBuffersPerShaderStage: 12, maxComputeWorkgroupStorageSize: 16384 };

const KERNEL = `
enable subgroups;
// A comment naming scale and out.
const WG: u32 = 64u;
override ROWS: u32 = 4u;
struct Params { n: u32, scale: f32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
var<workgroup> tile: array<vec4<f32>, WG * ROWS>;
var<workgroup> unused: array<f32, 4096>;
/* block comment: fn fake() {} */
fn scale(x: f32) -> f32 { return x * params.scale; }
@compute @workgroup_size(WG / ROWS, ROWS)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let i = wid.x * WG + tid;
  tile[tid] = vec4<f32>(0.0);
  workgroupBarrier();
  if (i < params.n) { out[i] = scale(f32(i)); }
}
`;

const spec = (code: string, entryPoint = 'main', constants?: Record<string, number>): KernelSpec => ({
  name: 'k',
  code,
  entryPoint,
  bindings: ['uniform', 'storage'],
  ...(constants ? { constants } : {}),
});

describe('WGSL pairing', () => {
  it('evaluates workgroup sizes and array lengths from consts and overrides', () => {
    const values = new Map([['A', '4u'], ['B', 'A * 2u + 1u'], ['C', '(B - 1u) / 4u']]);
    expect(evaluate('B', values)).toBe(9);
    expect(evaluate('C % 3u', values)).toBe(2);
    expect(evaluate('D', values)).toBeNull();
    expect(evaluate('A / 0u', values)).toBeNull();
    expect(evaluate('A +', values)).toBeNull();
  });

  it('reads a kernel: directives, builtins in order, workgroup size with its overrides, the workgroup bytes it uses', () => {
    const p = pairableKernel(spec(KERNEL))!;
    expect(p.directives).toEqual(['enable subgroups;']);
    expect(p.params).toEqual(['workgroup_id', 'local_invocation_index']);
    expect(p.workgroupSize).toEqual([16, 4, 1]);
    expect(p.workgroupBytes).toBe(64 * 4 * 16);
    expect(p.body).not.toContain('@builtin');
    expect(p.body).toContain('fn main(wid: vec3<u32>, tid: u32)');
    const overridden = pairableKernel(spec(KERNEL, 'main', { ROWS: 2 }))!;
    expect(overridden.workgroupSize).toEqual([32, 2, 1]);
    expect(overridden.workgroupBytes).toBe(64 * 2 * 16);
  });

  it('refuses what it cannot read: an unknown builtin, a size it cannot evaluate, a missing entry point', () => {
    expect(pairableKernel(spec(KERNEL.replace('local_invocation_index', 'subgroup_size')))).toBeNull();
    expect(pairableKernel(spec(KERNEL.replace('@workgroup_size(WG / ROWS, ROWS)', '@workgroup_size(NOPE)')))).toBeNull();
    expect(pairableKernel(spec(KERNEL, 'absent'))).toBeNull();
  });

  it('prefixes module-scope names where they are used, not members or comments', () => {
    const code = stripComments(KERNEL);
    expect(topLevelNames(code)).toEqual(['WG', 'ROWS', 'Params', 'params', 'out', 'tile', 'unused', 'scale', 'main']);
    const renamed = prefixNames(code, 'p2_');
    expect(renamed).toContain('struct p2_Params { n: u32, scale: f32 }');
    expect(renamed).toContain('fn p2_scale(x: f32) -> f32 { return x * p2_params.scale; }');
    expect(renamed).toContain('var<workgroup> p2_tile: array<vec4<f32>, p2_WG * p2_ROWS>;');
    expect(renamed).toContain('p2_out[i] = p2_scale(f32(i));');
    expect(renamed).toContain('@builtin(workgroup_id) wid');
  });

  it('composes a pair: bindings after the first, the second kernel prefixed, a router over both grids', () => {
    const a = spec(KERNEL);
    const b = spec(KERNEL, 'main', { ROWS: 4 });
    const { spec: pair, keptB } = composePair(a, pairableKernel(a)!, b, pairableKernel(b)!, LIMITS)!;
    expect(keptB).toEqual([0, 1]);
    expect(pair.bindings).toEqual(['uniform', 'storage', 'uniform', 'storage', 'uniform']);
    expect(pair.entryPoint).toBe('pair_main');
    expect(pair.constants).toEqual({ p2_ROWS: 4 });
    expect(pair.code.match(/enable subgroups;/g)).toHaveLength(1);
    expect(pair.code).toContain('@group(0) @binding(3) var<storage, read_write> p2_out');
    expect(pair.code).toContain('@group(0) @binding(4) var<uniform> pair_grid');
    expect(pair.code).toContain('@compute @workgroup_size(16, 4, 1)');
    expect(pair.code).toContain('main(pair_wid, pair_lix)');
    expect(pair.code).toContain('p2_main(pair_wid, pair_lix)');
  });

  it('binds a read-only input the two kernels share once, renamed in both', () => {
    const reader = KERNEL.replace('var<storage, read_write> out', 'var<storage, read> src').replace('out[i] = scale(f32(i));', 'let v = src[i] + scale(f32(i));').replace('@group(0) @binding(1) var<storage, read> src: array<f32>;', '@group(0) @binding(1) var<storage, read> src: array<f32>;\n@group(0) @binding(2) var<storage, read_write> out: array<f32>;').replace('let v = src[i] + scale(f32(i));', 'out[i] = src[i] + scale(f32(i));');
    const s = { ...spec(reader), bindings: ['uniform', 'read-only-storage', 'storage'] as const };
    const p = pairableKernel(s as KernelSpec)!;
    expect([...p.resources.entries()]).toEqual([[0, { name: 'params', declared: '<uniform>:Params' }], [1, { name: 'src', declared: '<storage,read>:array<f32>' }], [2, { name: 'out', declared: '<storage,read_write>:array<f32>' }]]);
    const { spec: pair, keptB } = composePair(s as KernelSpec, p, s as KernelSpec, p, LIMITS, [null, 1, null])!;
    expect(keptB).toEqual([0, 2]);
    expect(pair.bindings).toEqual(['uniform', 'read-only-storage', 'storage', 'uniform', 'storage', 'uniform']);
    expect(pair.code.match(/var<storage, read> pair_shared1: array<f32>;/g)).toHaveLength(1);
    expect(pair.code).toContain('out[i] = pair_shared1[i] + scale(f32(i));');
    expect(pair.code).toContain('p2_out[i] = pair_shared1[i] + p2_scale(f32(i));');
    // Two of b's bindings on one of a's: one variable for all three.
    const twice = KERNEL.replace('var<storage, read_write> out', 'var<storage, read> src').replace('@group(0) @binding(1) var<storage, read> src: array<f32>;', '@group(0) @binding(1) var<storage, read> src: array<f32>;\n@group(0) @binding(2) var<storage, read> src2: array<f32>;\n@group(0) @binding(3) var<storage, read_write> out: array<f32>;').replace('out[i] = scale(f32(i));', 'out[i] = src[i] + src2[i];');
    const t = { ...spec(twice), bindings: ['uniform', 'read-only-storage', 'read-only-storage', 'storage'] as const } as KernelSpec;
    const pt = pairableKernel(t)!;
    const both = composePair(t, pt, t, pt, LIMITS, [null, 1, 1, null])!;
    expect(both.keptB).toEqual([0, 3]);
    expect(both.spec.code).toContain('p2_out[i] = pair_shared1[i] + pair_shared1[i];');
    expect(both.spec.code).toContain('out[i] = pair_shared1[i] + src2[i];');
    expect(pair.code).toContain('@group(0) @binding(4) var<storage, read_write> p2_out');
    // A writable binding is never shared.
    expect(composePair(s as KernelSpec, p, s as KernelSpec, p, LIMITS, [null, null, 2])!.keptB).toEqual([0, 1, 2]);
  });

  it('refuses a pair of different workgroup sizes, or one over the binding or workgroup-memory limits', () => {
    const a = spec(KERNEL);
    const b = spec(KERNEL, 'main', { ROWS: 2 });
    expect(composePair(a, pairableKernel(a)!, b, pairableKernel(b)!, LIMITS)).toBeNull();
    const pa = pairableKernel(a)!;
    expect(composePair(a, pa, a, pa, { ...LIMITS, maxStorageBuffersPerShaderStage: 1 })).toBeNull();
    expect(composePair(a, pa, a, pa, { ...LIMITS, maxUniformBuffersPerShaderStage: 2 })).toBeNull();
    expect(composePair(a, pa, a, pa, { ...LIMITS, maxComputeWorkgroupStorageSize: 2 * 4096 - 4 })).toBeNull();
    expect(composePair(a, pa, a, pa, { ...LIMITS, maxComputeWorkgroupStorageSize: 2 * 4096 })).not.toBeNull();
  });

  it("reads every entry point of the project's shaders that the engine pairs on a software adapter", () => {
    const shader = (f: string) => readFileSync(join(__dirname, '../../../shaders', f), 'utf8');
    const read = (f: string, entry: string, constants?: Record<string, number>) => pairableKernel({ name: f, code: shader(f), entryPoint: entry, bindings: [], ...(constants ? { constants } : {}) });
    expect(read('matmul_blocked.wgsl', 'blocked')?.workgroupSize).toEqual([16, 1, 1]);
    expect(read('matmul_outer.wgsl', 'outer_tn_sum')?.workgroupSize).toEqual([16, 1, 1]);
    expect(read('matmul_skinny.wgsl', 'skinny_nn')?.workgroupSize).toEqual([16, 1, 1]);
    expect(read('matmul.wgsl', 'tiled')?.workgroupSize).toEqual([8, 8, 1]);
    expect(read('matmul.wgsl', 'tiled')?.workgroupBytes).toBeGreaterThan(0);
    expect(read('attention.wgsl', 'backward_dq', { DH: 32 })?.workgroupSize).toEqual([256, 1, 1]);
    expect(read('attention.wgsl', 'forward_rows', { DH: 32, ROW_WG: 64 })?.workgroupSize).toEqual([64, 1, 1]);
    expect(read('norm.wgsl', 'param_grads_gamma_beta')?.workgroupSize).toEqual([256, 1, 1]);
    expect(read('grad_norm.wgsl', 'partial_sums4')?.workgroupSize).toEqual([16, 1, 1]);
  });
});
