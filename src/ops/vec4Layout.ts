import type { Binding } from '../gpu/recorder';

// Whether a product's extents suit vec4 loads and stores: every value a multiple of 4 (the
// matmul kernel choice in matmul.ts, matmulBlocked.ts, matmulOuter.ts and matmulSkinny.ts; the
// optimizer's vec4 kernels in gradNorm.ts and adamw.ts).
export const quad = (...values: number[]): boolean => values.every((v) => v % 4 === 0);

/** Whether a binding starts 16-byte aligned, so a vec4 view of it reads its elements from the first. */
export const quadOffset = (b: Binding): boolean => ('buffer' in b ? (b.offset ?? 0) : 0) % 16 === 0;
