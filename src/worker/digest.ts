// A short SHA-256 digest of model weights, to show (and test) that a resumed run continues
// from exactly the weights its checkpoint saved.
import type { Tensor } from '../model/safetensors';

async function sha256(bytes: ArrayBuffer | Uint8Array): Promise<string> {
  const hash = await crypto.subtle.digest('SHA-256', bytes as BufferSource);
  return Array.from(new Uint8Array(hash).subarray(0, 12), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Digest of the tensor values of a model.safetensors file, or of tensors in Hugging Face names. */
export async function weightsDigest(source: ArrayBuffer | Map<string, Tensor>): Promise<string> {
  if (source instanceof ArrayBuffer) {
    const { readSafetensors } = await import('../model/safetensors');
    return weightsDigest(readSafetensors(source).tensors);
  }
  const names = [...source.keys()].sort();
  const total = names.reduce((s, n) => s + source.get(n)!.data.byteLength, 0);
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const n of names) {
    const d = source.get(n)!.data;
    bytes.set(new Uint8Array(d.buffer, d.byteOffset, d.byteLength), at);
    at += d.byteLength;
  }
  return sha256(bytes);
}
