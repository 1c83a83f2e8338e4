// Which models compute a layer's q, k and v as one stack (Transformer: one batched product for
// the three, one for their weight gradients) and how the stack's buffer is laid out. Pure: the
// memory estimate (memoryLayout.ts) and the Transformer share it.
import type { ModelConfig } from './config';

/**
 * Whether the layers of a model of this config stack q, k and v: multi-head attention (k and v
 * as wide as q) with nothing between the projections and attention (no RoPE, no q/k norms,
 * which would move the gradients out of the stack's slots): GPT-2. The Transformer also needs the
 * weights at one stride in the parameter arena (parameterSpecs lists them next to each other).
 */
export function stacksAttentionInput(c: ModelConfig): boolean {
  return c.architecture === 'gpt2' && c.numKvHeads === c.numHeads && !c.qkNorm;
}

/**
 * Floats per slot of a stack's buffer for `rows` token rows of `width` values: rounded up so
 * each slot starts at a storage binding offset the device accepts (attention binds q, k and v
 * each on its own). `alignBytes`: the device's minStorageBufferOffsetAlignment (256 on every
 * adapter measured; the memory estimate assumes it).
 */
export function stackSlot(rows: number, width: number, alignBytes = 256): number {
  const align = alignBytes / 4;
  return Math.ceil((rows * width) / align) * align;
}
