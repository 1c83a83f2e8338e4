// The outer-product weight-gradient kernel of shaders/matmul_outer.wgsl (C = A^T . B, A stored
// [K, M], B [K, N]; a software adapter only): when recordMatmul takes it, its pipelines and grid.
// Same Params and bindings as the matmul kernels (+ extra for the k-sums).
import shaderText from '../../shaders/matmul_outer.wgsl?raw';
import paramsText from '../../shaders/matmul_params.wgsl?raw';
import { includeWgsl } from './wgslInclude';
import type { BindingKind, KernelSpec } from '../gpu/pipelineCache';
import type { ResolvedMatmulShape } from './matmul';
import { quad } from './vec4Layout';

/** The shader with the matmul kernels' shared uniform block pasted in. */
const code = includeWgsl(shaderText, { 'matmul_params.wgsl': paramsText });

/** Longest K it is taken for: its lead over the tiled kernel fades towards K = 1024 on SwiftShader. */
export const OUTER_MAX_K = 512;
/** Threads per workgroup (the shader's), along the column quads. */
const WG = 16;

export type OuterShape = Pick<ResolvedMatmulShape, 'm' | 'n' | 'k' | 'transA' | 'transB' | 'batch' | 'strideA' | 'strideB' | 'strideC' | 'lda' | 'ldb' | 'ldc' | 'epilogue'>;

/** Whether the outer-product kernel serves this product on this adapter (it also needs A, B and C bound 16-byte aligned). */
export function outerApplies(s: OuterShape, software: boolean): boolean {
  const stridesQuad = s.batch === 1 || quad(s.strideA, s.strideB, s.strideC);
  return software && s.transA && !s.transB && s.epilogue === 'none' && s.k <= OUTER_MAX_K && quad(s.m, s.n, s.lda, s.ldb, s.ldc) && stridesQuad;
}

/**
 * Whether outer_tn_ragged serves it instead: M or lda not a multiple of 4 (a tied vocabulary
 * head's dE = dLogitsᵀ.X, M = V), A read element by element; N, ldb, ldc still multiples of 4
 * (B and C bound 16-byte aligned), no k-sums.
 */
export function outerRaggedApplies(s: OuterShape & Pick<ResolvedMatmulShape, 'sumK'>, software: boolean): boolean {
  return software && s.transA && !s.transB && s.batch === 1 && s.epilogue === 'none' && s.sumK === null && s.k <= OUTER_MAX_K && quad(s.n, s.ldb, s.ldc) && !quad(s.m, s.lda);
}

const SPECS = new Map<string, KernelSpec>();
let raggedSpec: KernelSpec | null = null;

/** The ragged kernel (no k-sums). */
export function outerRaggedSpec(bindings: readonly BindingKind[]): KernelSpec {
  raggedSpec ??= { name: 'matmul_outer', code, entryPoint: 'outer_tn_ragged', bindings: [...bindings] };
  return raggedSpec;
}

/** The plain kernel, or with sumK the one that also writes the k-sums into binding 5. */
export function outerSpec(sumK: 'a' | 'b' | null, bindings: readonly BindingKind[]): KernelSpec {
  const key = sumK ?? '-';
  let spec = SPECS.get(key);
  if (!spec) {
    spec = sumK
      ? { name: 'matmul_outer', code, entryPoint: 'outer_tn_sum', bindings: [...bindings, 'storage'], constants: { SUM_K: sumK === 'b' ? 1 : 2 } }
      : { name: 'matmul_outer', code, entryPoint: 'outer_tn', bindings: [...bindings] };
    SPECS.set(key, spec);
  }
  return spec;
}

/** Workgroups (x over blocks of 8 columns, y over blocks of 8 rows, the last part full for a ragged M). */
export function outerGrid(m: number, n: number): [number, number] {
  return [Math.ceil(n / 8 / WG), Math.ceil(m / 8)];
}
