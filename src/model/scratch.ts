// Temporaries of one recording that the recording's own later commands reuse once they are
// dead. Commands run in recorded order, so a later dispatch may overwrite a buffer an earlier
// one finished with. The buffers go back to the pool only after the submission has run:
// handing one back earlier could let an upload (queue.writeBuffer, which runs before the whole
// command buffer) land on it while recorded commands still use it. scratchRuntime() lets ops
// that allocate their own outputs draw them from a scratch, so a pass that keeps nothing for
// backward (sampling, scoring) reuses its temporaries from layer to layer.
import { bucketSize } from '../gpu/bufferPool';
import type { GpuRuntime } from '../gpu/runtime';
import type { Recorder } from '../gpu/recorder';

/** Where a pass takes temporaries from and tells which ones it has finished with. */
export interface Scratch {
  take(bytes: number, label: string): GPUBuffer;
  /** A buffer an op allocated: the scratch owns (and later releases) it from now on. */
  adopt<T extends GPUBuffer>(buffer: T): T;
  /** Buffers no later command reads or writes any more; later takes may reuse them. */
  done(...buffers: GPUBuffer[]): void;
}

export class RecordingScratch implements Scratch {
  private readonly free = new Map<number, GPUBuffer[]>();
  private readonly owned = new Set<GPUBuffer>();

  constructor(
    private readonly rt: GpuRuntime,
    private readonly rec: Recorder,
  ) {}

  take(bytes: number, label: string): GPUBuffer {
    const reused = this.free.get(bucketSize(Math.max(bytes, 16)))?.pop();
    if (reused) return reused;
    return this.adopt(this.rt.storage(bytes, label));
  }

  adopt<T extends GPUBuffer>(buffer: T): T {
    this.owned.add(buffer);
    return buffer;
  }

  done(...buffers: GPUBuffer[]): void {
    for (const b of buffers) {
      if (!this.owned.has(b)) throw new Error(`scratch: buffer "${b.label}" is not owned by this recording's scratch`);
      let list = this.free.get(b.size);
      if (!list) this.free.set(b.size, (list = []));
      if (list.includes(b)) throw new Error(`scratch: buffer "${b.label}" was already marked done`);
      list.push(b);
    }
  }

  /** Hands every buffer to the pool once the recording has been submitted and run. */
  finish(): void {
    this.rec.releaseAfterSubmit(...this.owned);
    this.owned.clear();
    this.free.clear();
  }
}

/**
 * A view of `rt` whose storage() takes from `scratch`: an op's outputs become the recording's
 * temporaries, reused by later takes once marked done and released with the scratch. Uploads
 * still come from the pool, never from the scratch (see the top of this file). Buffers from the
 * view must not be released one by one: the scratch releases them after the submission.
 */
export function scratchRuntime(rt: GpuRuntime, scratch: Scratch): GpuRuntime {
  const view = Object.create(rt) as GpuRuntime;
  Object.defineProperties(view, {
    storage: { value: (byteLength: number, label = 'storage') => scratch.take(byteLength, label) },
    release: {
      value: (...buffers: GPUBuffer[]) => {
        throw new Error(`scratch runtime: "${buffers[0]?.label}" belongs to the recording's scratch, which releases it after the submission`);
      },
    },
  });
  return view;
}
