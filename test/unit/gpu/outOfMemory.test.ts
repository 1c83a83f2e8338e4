// An allocation the GPU refuses for lack of memory (WebGPU: an 'out-of-memory' error scope around
// createBuffer; the buffer is invalid) is recorded by the buffer pool with the buffer's label and
// size, the invalid buffer is never handed out again, and the page's message names it. A fake
// device whose error scopes report a refusal for the chosen buffers.
import { describe, expect, it } from 'vitest';
import { BufferPool, describeAllocation } from '../../../src/gpu/bufferPool';
import { outOfMemoryMessage } from '../../../src/worker/outOfMemoryMessage';

/** A device that refuses the allocations whose label `refuse` picks (reported by popErrorScope, as WebGPU does). */
function fakeDevice(refuse: (label: string) => boolean = () => false) {
  const scopes: (string | null)[] = [];
  const open: string[] = [];
  let pending: string | null = null;
  const destroyed = new Set<string>();
  let made = 0;
  const device = {
    limits: { maxBufferSize: 1 << 30 },
    pushErrorScope: (filter: string) => open.push(filter),
    popErrorScope: () => {
      const filter = open.pop();
      const error = filter === 'out-of-memory' && pending ? { message: `Out of memory allocating ${pending}` } : null;
      pending = null;
      scopes.push(error?.message ?? null);
      return Promise.resolve(error);
    },
    createBuffer: ({ size, usage, label }: { size: number; usage: number; label: string }) => {
      if (open.at(-1) === 'out-of-memory' && refuse(label)) pending = label;
      const name = `${label}#${made++}`;
      return { size, usage, label: name, destroy: () => destroyed.add(name) };
    },
  };
  return { device: device as unknown as GPUDevice, scopes, destroyed };
}
const flush = () => new Promise((r) => setTimeout(r, 0));

describe('buffer pool: out of memory', () => {
  it('records the refused allocation by label and size, once, and never hands the invalid buffer out again', async () => {
    const { device, scopes, destroyed } = fakeDevice((label) => label === 'logits');
    const pool = new BufferPool(device);
    const ok = pool.acquire(1000, 1, 'hidden');
    const bad = pool.acquire(3 * 2 ** 20, 1, 'logits');
    await flush();
    expect(scopes).toEqual([null, 'Out of memory allocating logits']);
    expect(pool.outOfMemory).toEqual({ label: 'logits', bytes: bad.size, detail: 'Out of memory allocating logits' });
    expect(describeAllocation(pool.outOfMemory!)).toBe('the buffer "logits" (3.0 MiB)');
    // Released, the invalid buffer is destroyed, not kept: the next request gets a new one.
    pool.release(bad);
    expect(destroyed.has(bad.label)).toBe(true);
    expect(pool.snapshot()).toMatchObject({ bytesInUse: ok.size, bytesFree: 0 });
    const again = pool.acquire(3 * 2 ** 20, 1, 'other');
    expect(again).not.toBe(bad);
    // Reported once; the first refusal is the one named.
    expect(pool.takeOutOfMemory()?.label).toBe('logits');
    expect(pool.takeOutOfMemory()).toBeNull();
    // A good buffer goes back to the free list as always.
    pool.release(ok);
    expect(pool.acquire(1000, 1, 'hidden')).toBe(ok);
  });

  it('the test hook refuses the next acquire even when the free list could serve it', () => {
    const { device, destroyed } = fakeDevice();
    const pool = new BufferPool(device);
    const a = pool.acquire(1000, 1, 'a');
    pool.release(a);
    pool.failNextAllocation();
    const b = pool.acquire(1000, 1, 'kv cache');
    expect(b).not.toBe(a);
    expect(destroyed.has(b.label)).toBe(true);
    expect(pool.outOfMemory).toEqual({ label: 'kv cache', bytes: 1024, detail: 'refused by the failNextAllocation test hook' });
    // Only the next one.
    expect(pool.acquire(1000, 1, 'a')).toBe(a);
    expect(pool.takeOutOfMemory()?.label).toBe('kv cache');
    expect(pool.outOfMemory).toBeNull();
  });

  it('a device without a refusal records nothing', async () => {
    const { device } = fakeDevice();
    const pool = new BufferPool(device);
    for (let i = 0; i < 5; i++) pool.acquire(4096 * (i + 1), 1, `b${i}`);
    await flush();
    expect(pool.outOfMemory).toBeNull();
  });
});

describe('outOfMemoryMessage', () => {
  it('names the buffer and the step, says the checkpoint is intact and what to do', () => {
    expect(outOfMemoryMessage({ label: 'logits', bytes: 12 * 2 ** 20 }, { step: 4, checkpointStep: 4 })).toBe(
      'The GPU ran out of memory: the buffer "logits" (12.0 MiB) did not fit during step 4, so the run stopped. Nothing committed was lost, and the last checkpoint (step 4) is intact. ' +
        'Free GPU memory (close other tabs or apps that use the GPU) or lower generation_batch_size, max_completion_length or the model size, then press Resume.',
    );
  });

  it('without a checkpoint, says Resume starts from step 0; small buffers read in KiB or bytes', () => {
    const m = outOfMemoryMessage({ label: 'uniform', bytes: 256 }, { step: null, checkpointStep: null });
    expect(m).toContain('the buffer "uniform" (256 bytes) did not fit while the run was open');
    expect(describeAllocation({ label: 'kv', bytes: 1536 })).toBe('the buffer "kv" (1.5 KiB)');
    expect(m).toContain('the run has no checkpoint yet: Resume starts it again from step 0.');
  });
});
