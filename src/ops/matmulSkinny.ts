// The skinny kernels of shaders/matmul_skinny.wgsl (M <= 8 rows, register-blocked, no barrier):
// when recordMatmul may take them, their pipelines and their grid. Same Params and bindings as
// the matmul kernels, so recordMatmul dispatches them like the others.
import shaderText from '../../shaders/matmul_skinny.wgsl?raw';
import paramsText from '../../shaders/matmul_params.wgsl?raw';
import epilogueText from '../../shaders/matmul_epilogue.wgsl?raw';
import { includeWgsl } from './wgslInclude';
import type { KernelSpec } from '../gpu/pipelineCache';
import type { ResolvedMatmulShape } from './matmul';
import { quad } from './vec4Layout';

/** The shader with the matmul kernels' shared uniform block and epilogues pasted in. */
const code = includeWgsl(shaderText, { 'matmul_params.wgsl': paramsText, 'matmul_epilogue.wgsl': epilogueText });

export type SkinnyKernel = 'skinny_nn' | 'skinny_nt';

/** The most rows the shader holds (its ROWS). */
const MAX_ROWS = 8;

/** Threads per workgroup (the shader's WG): small, so a few hundred columns still make several workgroups for a CPU adapter's cores. */
const WG = 16;

/** The shape facts the choice depends on. */
export type SkinnyShape = Pick<ResolvedMatmulShape, 'm' | 'n' | 'k' | 'transA' | 'transB' | 'batch' | 'strideA' | 'strideB' | 'strideC' | 'lda' | 'ldb' | 'ldc'>;

/**
 * The skinny kernel for a product of at most `maxRows` rows whose layout allows its vector
 * loads, or null. (The caller also needs its bindings 16-byte aligned.)
 */
export function skinnyKernel(s: SkinnyShape, maxRows: number): SkinnyKernel | null {
  if (s.m > maxRows) return null;
  const batched = s.batch > 1;
  if (!s.transB) return quad(s.n, s.ldb, s.ldc) && (!batched || quad(s.strideB, s.strideC)) ? 'skinny_nn' : null;
  return !s.transA && quad(s.k, s.lda, s.ldb) && (!batched || quad(s.strideA, s.strideB)) ? 'skinny_nt' : null;
}

const SPECS = new Map<string, KernelSpec>();

/**
 * The pipeline of `kernel` for products of exactly `rows` rows (the shader's M_ROWS); with an
 * epilogue code (matmul.ts's EPILOGUE_CODES, above 0) its _fused entry point, whose `bindings`
 * then include `extra`; with sumBatches (no epilogue) the variant that sums the batches.
 */
export function skinnySpec(kernel: SkinnyKernel, transA: boolean, rows: number, bindings: KernelSpec['bindings'], epilogue = 0, sumBatches = false): KernelSpec {
  if (!Number.isInteger(rows) || rows < 1 || rows > MAX_ROWS) throw new RangeError(`the skinny kernels take 1 to ${MAX_ROWS} rows, got ${rows}`);
  const key = `${kernel}:${transA ? 1 : 0}:${rows}:${epilogue}:${sumBatches ? 1 : 0}`;
  let spec = SPECS.get(key);
  if (!spec) {
    const constants = { TRANS_A: transA ? 1 : 0, M_ROWS: rows, ...(epilogue > 0 ? { EPILOGUE: epilogue } : {}), ...(sumBatches ? { SUM_BATCHES: 1 } : {}) };
    spec = { name: 'matmul_skinny', code, entryPoint: epilogue > 0 ? `${kernel}_fused` : kernel, bindings, constants };
    SPECS.set(key, spec);
  }
  return spec;
}

/** Workgroups along x: a thread per 4 columns. */
export function skinnyGroups(n: number): number {
  return Math.ceil(n / 4 / WG);
}
