// Multi-tensor kernels (shaders/grad_norm_multi.wgsl, shaders/adamw_multi.wgsl) bind one set of
// buffers per tensor: WGSL cannot index an array of buffers, and the parameters live in
// separate buffers. This writes a shader's variant for a group of `tensors` tensors, and splits
// a tensor list into such groups within the adapter's storage-binding limit.
import type { Binding } from '../gpu/recorder';

const BINDING_MARK = '// TENSOR_BINDING ';
const CASE_MARK = '// TENSOR_CASE ';

/**
 * Sets `const TENSORS` and repeats each marked line once per tensor j, with `#` -> j and
 * `$b` (or `$b+n`) -> firstBinding + j * bindingsPerTensor (+ n).
 */
export function expandMultiTensor(code: string, tensors: number, firstBinding: number, bindingsPerTensor: number): string {
  if (!Number.isInteger(tensors) || tensors < 1) throw new RangeError(`a multi-tensor kernel needs at least one tensor, got ${tensors}`);
  const sized = code.replace(/const TENSORS: u32 = \d+u;/, `const TENSORS: u32 = ${tensors}u;`);
  if (sized === code && !code.includes(`const TENSORS: u32 = ${tensors}u;`)) throw new Error('multi-tensor shader: no TENSORS constant');
  const lines = sized.split('\n').flatMap((line) => {
    const mark = line.includes(BINDING_MARK) ? BINDING_MARK : line.includes(CASE_MARK) ? CASE_MARK : null;
    if (!mark) return [line];
    const indent = line.slice(0, line.indexOf(mark));
    const template = line.slice(line.indexOf(mark) + mark.length);
    return Array.from({ length: tensors }, (_, j) => {
      const base = firstBinding + j * bindingsPerTensor;
      return indent + template.replace(/\$b\+(\d+)/g, (_m, n: string) => String(base + Number(n))).replace(/\$b/g, String(base)).replace(/#/g, String(j));
    });
  });
  return lines.join('\n');
}

export function bufferOfBinding(b: Binding): GPUBuffer {
  return 'buffer' in b ? b.buffer : b;
}

/**
 * Consecutive groups [start, end) of at most `size` tensors; with `distinct`, a group never holds
 * the same buffer twice (WebGPU forbids a writable binding aliasing another in one dispatch).
 */
export function tensorGroups(count: number, size: number, buffersOf?: (k: number) => GPUBuffer[]): [number, number][] {
  const groups: [number, number][] = [];
  let start = 0;
  let seen = new Set<GPUBuffer>();
  for (let k = 0; k < count; k++) {
    const own = buffersOf?.(k) ?? [];
    const clash = own.some((b) => seen.has(b)) || new Set(own).size !== own.length;
    if (k > start && (k - start >= size || clash)) {
      groups.push([start, k]);
      start = k;
      seen = new Set();
    }
    for (const b of own) seen.add(b);
  }
  if (count > start) groups.push([start, count]);
  return groups;
}
