// Whether a product's extents suit vec4 loads and stores: every value a multiple of 4 (the
// matmul kernel choice in matmul.ts, matmulBlocked.ts, matmulOuter.ts and matmulSkinny.ts).
export const quad = (...values: number[]): boolean => values.every((v) => v % 4 === 0);
