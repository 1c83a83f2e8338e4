// The register-blocked kernels of shaders/matmul_blocked.wgsl (M > 8 rows, A not transposed; a
// software adapter only): when recordMatmul takes them, their pipelines and grid. Same Params
// and bindings as the matmul kernels (+ extra for the fused epilogues).
import shaderText from '../../shaders/matmul_blocked.wgsl?raw';
import paramsText from '../../shaders/matmul_params.wgsl?raw';
import epilogueText from '../../shaders/matmul_epilogue.wgsl?raw';
import { includeWgsl } from './wgslInclude';
import type { BindingKind, KernelSpec } from '../gpu/pipelineCache';
import type { MatmulEpilogue, ResolvedMatmulShape } from './matmul';
import { quad } from './vec4Layout';

/** The shader with the matmul kernels' uniform block and epilogues pasted in. */
const code = includeWgsl(shaderText, { 'matmul_params.wgsl': paramsText, 'matmul_epilogue.wgsl': epilogueText });

/** Rows and columns per thread, threads per workgroup (the shader's 8 x 8 block and WG). */
const ROWS = 8;
const COLS = 8;
const WG = 16;

export type BlockedShape = Pick<
  ResolvedMatmulShape,
  'm' | 'n' | 'k' | 'transA' | 'transB' | 'batch' | 'strideA' | 'strideB' | 'strideC' | 'lda' | 'ldb' | 'ldc' | 'sumK' | 'epilogue'
>;

/**
 * Whether the blocked kernels serve this product on this adapter (they also need A, B and C
 * bound 16-byte aligned): a software adapter, A not transposed, no k-sum, every extent the
 * vec4 loads walk a multiple of 4.
 */
export function blockedApplies(s: BlockedShape, software: boolean): boolean {
  const stridesQuad = s.batch === 1 || quad(s.strideA, s.strideB, s.strideC);
  return software && !s.transA && !s.sumK && quad(s.k, s.n, s.lda, s.ldb, s.ldc) && stridesQuad;
}

/**
 * Whether blocked_ragged serves it instead: A.Bᵀ with no epilogue whose N, ldc or C batch stride
 * is not a multiple of 4 (a vocabulary-sized head, N = 259), A and B still vec4-friendly (A, B
 * bound 16-byte aligned). C is stored element by element.
 */
export function blockedRaggedApplies(s: BlockedShape, software: boolean): boolean {
  const stridesQuad = s.batch === 1 || quad(s.strideA, s.strideB);
  return software && s.transB && !s.transA && !s.sumK && s.epilogue === 'none' && quad(s.k, s.lda, s.ldb) && stridesQuad;
}

const SPECS = new Map<string, KernelSpec>();
let raggedSpec: KernelSpec | null = null;

/** The ragged kernel (always A.Bᵀ). */
export function blockedRaggedSpec(bindings: readonly BindingKind[]): KernelSpec {
  raggedSpec ??= { name: 'matmul_blocked', code, entryPoint: 'blocked_ragged', bindings: [...bindings], constants: { TRANS_B: 1 } };
  return raggedSpec;
}

/**
 * The plain kernel (summing its batches into one C with `sumBatches`), or with an epilogue the
 * fused one that also binds extra (binding 5).
 */
export function blockedSpec(transB: boolean, epilogue: MatmulEpilogue, epilogueCode: number, bindings: readonly BindingKind[], sumBatches = false): KernelSpec {
  if (sumBatches && epilogue !== 'none') throw new RangeError(`the blocked kernel sums batches without an epilogue, got '${epilogue}'`);
  const key = `${transB ? 1 : 0}:${epilogue}:${sumBatches ? 1 : 0}`;
  let spec = SPECS.get(key);
  if (!spec) {
    const constants = { TRANS_B: transB ? 1 : 0 };
    spec =
      epilogue === 'none'
        ? { name: 'matmul_blocked', code, entryPoint: 'blocked', bindings: [...bindings], constants: sumBatches ? { ...constants, SUM_BATCHES: 1 } : constants }
        : { name: 'matmul_blocked', code, entryPoint: 'blocked_fused', bindings: [...bindings, 'storage'], constants: { ...constants, EPILOGUE: epilogueCode } };
    SPECS.set(key, spec);
  }
  return spec;
}

/** Workgroups (x over blocks of 8 columns, y over blocks of 8 rows); N rounded up to a quad for the ragged kernel. */
export function blockedGrid(m: number, n: number): [number, number] {
  return [Math.ceil(Math.ceil(n / 4) / (COLS / 4) / WG), Math.ceil(m / ROWS)];
}
