// Bind groups reused across recordings. A training step records the same ~170 dispatches over
// the same pooled buffers every time, so creating a fresh bind group per dispatch is repeated
// CPU work in the hot path. Keys name buffers by an id given on first sight (a WeakMap, so a
// destroyed buffer's entries are simply never asked for again); the map is LRU-bounded.
import type { Binding } from './recorder';

export interface BindGroupCacheStats {
  created: number;
  reused: number;
}

export class BindGroupCache {
  private readonly ids = new WeakMap<GPUBuffer, number>();
  private readonly layoutIds = new WeakMap<GPUBindGroupLayout, number>();
  private nextId = 1;
  private readonly groups = new Map<string, GPUBindGroup>();
  readonly stats: BindGroupCacheStats = { created: 0, reused: 0 };

  constructor(
    private readonly device: GPUDevice,
    private readonly capacity = 8192,
  ) {}

  private idOf<K extends object>(map: WeakMap<K, number>, key: K): number {
    let id = map.get(key);
    if (id === undefined) {
      id = this.nextId++;
      map.set(key, id);
    }
    return id;
  }

  get(layout: GPUBindGroupLayout, bindings: readonly Binding[]): GPUBindGroup {
    let key = `${this.idOf(this.layoutIds, layout)}`;
    for (const b of bindings) {
      key += 'buffer' in b ? `|${this.idOf(this.ids, b.buffer)}:${b.offset ?? 0}:${b.size ?? '-'}` : `|${this.idOf(this.ids, b)}`;
    }
    const hit = this.groups.get(key);
    if (hit) {
      // Refresh its place in the LRU order.
      this.groups.delete(key);
      this.groups.set(key, hit);
      this.stats.reused++;
      return hit;
    }
    const group = this.device.createBindGroup({
      layout,
      entries: bindings.map((b, binding) => ({ binding, resource: 'buffer' in b ? b : { buffer: b } })),
    });
    this.groups.set(key, group);
    this.stats.created++;
    if (this.groups.size > this.capacity) this.groups.delete(this.groups.keys().next().value as string);
    return group;
  }
}
