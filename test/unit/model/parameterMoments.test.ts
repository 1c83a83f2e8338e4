// ParameterStore keeps the AdamW moments of all trainable tensors in one shared buffer (so an
// AdamW dispatch binds them once: shaders/adamw_moments.wgsl), split where the device's buffer
// or binding limit would be passed. Checked on a fake runtime: the layout, the split, the
// accounting and that nothing is taken from the pool's free list.
import { describe, expect, it } from 'vitest';
import type { GpuRuntime } from '../../../src/gpu/runtime';
import type { Recorder } from '../../../src/gpu/recorder';
import { configFromHf } from '../../../src/model/config';
import { initialWeights } from '../../../src/model/init';
import { ParameterStore } from '../../../src/model/parameters';

interface FakeBuffer {
  size: number;
  label: string;
  destroyed: boolean;
}

function fakeRuntime(limits: { maxBufferSize: number; maxStorageBufferBindingSize: number }) {
  const made: FakeBuffer[] = [];
  const writes: { buffer: FakeBuffer; offset: number; bytes: number }[] = [];
  const make = (size: number, label: string) => {
    const b = { size, label, destroyed: false };
    made.push(b);
    return b;
  };
  const rt = {
    device: {
      limits: { minStorageBufferOffsetAlignment: 256, ...limits },
      queue: { writeBuffer: (buffer: FakeBuffer, offset: number, _data: ArrayBuffer, _at: number, bytes: number) => writes.push({ buffer, offset, bytes }) },
    },
    upload: (data: ArrayBufferView, label: string) => make(data.byteLength, label),
    storage: (bytes: number, label: string) => make(bytes, label),
    persistentStorage: (bytes: number, label: string) => make(Math.max(256, Math.ceil(bytes / 256) * 256), `new:${label}`),
    release: () => {},
    pool: { discard: (b: FakeBuffer) => void (b.destroyed = true) },
  } as unknown as GpuRuntime;
  return { rt, made, writes };
}

const config = configFromHf({ model_type: 'gpt2', vocab_size: 300, n_embd: 32, n_layer: 1, n_head: 4, n_inner: 64, n_positions: 16 });
const recorder = () => {
  const cleared: FakeBuffer[] = [];
  return { rec: { clear: (b: FakeBuffer) => void cleared.push(b) } as unknown as Recorder, cleared };
};
const aligned = (count: number) => Math.ceil((count * 4) / 256) * 256;

describe('ParameterStore AdamW moments', () => {
  it('puts every tensor’s exp_avg and exp_avg_sq in one new, zeroed buffer at aligned offsets, once', () => {
    const { rt } = fakeRuntime({ maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 30 });
    const store = ParameterStore.create(rt, config, initialWeights(config, 1));
    const { rec, cleared } = recorder();
    const tensors = store.optimizerTensors(rec);
    expect(tensors.length).toBe(store.trainable.length);
    const buffers = new Set(tensors.flatMap((t) => [t.m, t.v].map((b) => ('buffer' in b ? b.buffer : b))));
    expect(buffers.size).toBe(1);
    const [buffer] = [...buffers] as unknown as FakeBuffer[];
    expect(buffer.label).toBe('new:exp_avg, exp_avg_sq');
    expect(cleared).toEqual([buffer]);
    // Back to back, m then v, each at a 256-byte boundary, no overlap.
    let at = 0;
    for (const t of tensors) {
      expect(t.m).toEqual({ buffer, offset: at, size: t.count * 4 });
      expect(t.v).toEqual({ buffer, offset: at + aligned(t.count), size: t.count * 4 });
      at += 2 * aligned(t.count);
    }
    expect(buffer.size).toBe(at);
    // Values and gradients: one arena each, every tensor at a 256-byte boundary.
    const arena = store.list.reduce((s, p) => s + aligned(p.count), 0);
    expect(store.bytes).toBe(2 * arena + at);
    // A second step reuses them, clears nothing.
    const again = recorder();
    expect(store.optimizerTensors(again.rec)).toEqual(tensors);
    expect(again.cleared).toEqual([]);
    store.freeze();
    expect(buffer.destroyed).toBe(true);
    expect(store.trainable).toEqual([]);
  });

  it('splits the moments where a buffer would pass the device limit; a tensor too big to share gets two buffers', () => {
    const counts = ParameterStore.create(fakeRuntime({ maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 30 }).rt, config, initialWeights(config, 1)).trainable.map((p) => p.count);
    const [biggest, second] = [...counts].sort((a, b) => b - a);
    // Room for the second biggest tensor's two moments, not the biggest's (the token embedding,
    // 300 x 32): the biggest cannot share, the others need more than one buffer.
    expect(aligned(biggest)).toBeGreaterThan(aligned(second));
    const limit = 2 * aligned(second);
    const { rt } = fakeRuntime({ maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: limit });
    const store = ParameterStore.create(rt, config, initialWeights(config, 1));
    const tensors = store.optimizerTensors(recorder().rec);
    const bufferOf = (b: (typeof tensors)[number]['m']) => ('buffer' in b ? b.buffer : b) as unknown as FakeBuffer;
    for (const t of tensors) {
      if (t.count === biggest) {
        // Too big to share: a buffer per moment, the separate-moments kernel's case.
        expect(bufferOf(t.m)).not.toBe(bufferOf(t.v));
        expect([bufferOf(t.m).size, bufferOf(t.v).size]).toEqual([aligned(t.count), aligned(t.count)]);
      } else {
        expect(bufferOf(t.m)).toBe(bufferOf(t.v));
        expect(bufferOf(t.m).size).toBeLessThanOrEqual(limit);
      }
    }
    const shared = new Set(tensors.filter((t) => t.count !== biggest).map((t) => bufferOf(t.m)));
    expect(shared.size).toBeGreaterThan(1);
  });

  it('loads checkpoint moments into the shared buffer at each tensor’s offsets', () => {
    const { rt, writes } = fakeRuntime({ maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 30 });
    const store = ParameterStore.create(rt, config, initialWeights(config, 1));
    const moments = new Map(store.trainable.flatMap((p) => [`exp_avg.${p.name}`, `exp_avg_sq.${p.name}`].map((k) => [k, { shape: p.shape, data: new Float32Array(p.count) }] as const)));
    store.loadMoments(moments);
    const tensors = store.optimizerTensors(recorder().rec);
    const expected = tensors.flatMap((t) => [t.m, t.v].map((b) => ('buffer' in b ? { buffer: b.buffer, offset: b.offset, bytes: t.count * 4 } : null)));
    expect(writes.slice(-expected.length)).toEqual(expected);
  });
});

describe('ParameterStore arenas (values and gradients)', () => {
  it('puts the tensors added together in one values buffer and one gradients buffer, at the same aligned offsets', () => {
    const { rt, writes } = fakeRuntime({ maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 30 });
    const store = ParameterStore.create(rt, config, initialWeights(config, 1));
    const values = new Set(store.list.map((p) => p.value.buffer));
    const grads = new Set(store.list.map((p) => p.grad!.buffer));
    expect([values.size, grads.size]).toEqual([1, 1]);
    let at = 0;
    for (const p of store.list) {
      expect(p.value).toMatchObject({ offset: at, size: p.count * 4 });
      expect(p.grad).toMatchObject({ offset: at, size: p.count * 4 });
      at += aligned(p.count);
    }
    // Each tensor's data was written at its offset.
    const [valueBuffer] = [...values];
    expect(writes.filter((w) => w.buffer === (valueBuffer as unknown as FakeBuffer)).map((w) => w.offset)).toEqual(store.list.map((p) => p.value.offset));
    // Zeroing the gradients is one clear.
    const { rec, cleared } = recorder();
    store.recordZeroGrads(rec);
    expect(cleared).toEqual([...grads]);
    // Freezing drops the gradients' buffer; LoRA-style tensors added later get arenas of their own.
    store.freeze();
    expect((([...grads][0] as unknown as FakeBuffer).destroyed)).toBe(true);
    const spec = { name: 'extra.weight', shape: [3, 5] };
    store.add([spec], new Map([[spec.name, { shape: spec.shape, data: new Float32Array(15) }]]));
    expect(store.trainable.map((p) => p.name)).toEqual(['extra.weight']);
    expect(values.has(store.get('extra.weight').value.buffer)).toBe(false);
    store.destroy();
    expect((valueBuffer as unknown as FakeBuffer).destroyed).toBe(true);
  });

  it('splits the arenas where a buffer would pass the device limit', () => {
    const counts = ParameterStore.create(fakeRuntime({ maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 30 }).rt, config, initialWeights(config, 1)).list.map((p) => p.count);
    const biggest = Math.max(...counts);
    const limit = aligned(biggest) + 1024;
    const { rt } = fakeRuntime({ maxBufferSize: limit, maxStorageBufferBindingSize: 2 ** 30 });
    const store = ParameterStore.create(rt, config, initialWeights(config, 1));
    const arenas = new Set(store.list.map((p) => p.value.buffer as unknown as FakeBuffer));
    expect(arenas.size).toBeGreaterThan(1);
    for (const b of arenas) expect(b.size).toBeLessThanOrEqual(limit);
    for (const p of store.list) expect(p.value.offset + aligned(p.count)).toBeLessThanOrEqual((p.value.buffer as unknown as FakeBuffer).size);
  });

  it('sees q, k and v (and their biases) as stacks at one stride; not other tensors, nor across a split arena', () => {
    const { rt } = fakeRuntime({ maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 30 });
    const store = ParameterStore.create(rt, config, initialWeights(config, 1));
    const w = store.stack(['transformer.h.0.attn.q.weight', 'transformer.h.0.attn.k.weight', 'transformer.h.0.attn.v.weight']);
    const q = store.get('transformer.h.0.attn.q.weight');
    // 32 x 32 floats: 4 KiB, already aligned, so the three lie back to back.
    expect(w).toEqual({ value: { buffer: q.value.buffer, offset: q.value.offset, size: 3 * 4096 }, grad: { buffer: q.grad!.buffer, offset: q.grad!.offset, size: 3 * 4096 }, stride: 1024, count: 1024 });
    // The biases (32 floats each) follow the weights, 256 bytes apart.
    const b = store.stack(['transformer.h.0.attn.q.bias', 'transformer.h.0.attn.k.bias', 'transformer.h.0.attn.v.bias']);
    expect(b).toMatchObject({ stride: 64, count: 32, value: { offset: q.value.offset + 3 * 4096, size: 2 * 256 + 128 } });
    // Different sizes, uneven spacing, or out of order: no stack.
    expect(store.stack(['transformer.h.0.attn.q.weight', 'transformer.h.0.attn.q.bias'])).toBeNull();
    expect(store.stack(['transformer.h.0.attn.q.weight', 'transformer.h.0.attn.v.weight'])).not.toBeNull();
    expect(store.stack(['transformer.h.0.attn.q.weight', 'transformer.h.0.attn.k.weight', 'transformer.h.0.attn.c_proj.weight'])).toBeNull();
    expect(store.stack(['transformer.h.0.attn.k.weight', 'transformer.h.0.attn.q.weight'])).toBeNull();
    // Frozen: the values still stack, with no gradient.
    store.freeze();
    expect(store.stack(['transformer.h.0.attn.q.weight', 'transformer.h.0.attn.k.weight', 'transformer.h.0.attn.v.weight'])?.grad).toBeNull();
    // An arena split between k and v (a buffer limit just past q and k): no stack.
    const { rt: small } = fakeRuntime({ maxBufferSize: 2 * 4096, maxStorageBufferBindingSize: 2 ** 30 });
    const split = ParameterStore.create(small, config, initialWeights(config, 1));
    expect(split.stack(['transformer.h.0.attn.q.weight', 'transformer.h.0.attn.k.weight', 'transformer.h.0.attn.v.weight'])).toBeNull();
  });
});
