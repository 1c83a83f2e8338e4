// Compiles each (shader, entry point, override constants) once and hands back the same
// pipeline afterwards; bind group layouts are explicit so several entry points of one
// shader can share one binding list.

export type BindingKind = 'storage' | 'read-only-storage' | 'uniform';

export interface KernelSpec {
  /** Name used in labels and error messages. */
  name: string;
  code: string;
  entryPoint: string;
  /** Binding kinds for @group(0) @binding(i), in binding order. */
  bindings: readonly BindingKind[];
  /** WGSL `override` constants, e.g. the workgroup size. */
  constants?: Record<string, number>;
}

export interface KernelPipeline {
  spec: KernelSpec;
  pipeline: GPUComputePipeline;
  layout: GPUBindGroupLayout;
  key: string;
  /** Resolves to the WGSL compile or pipeline validation error, or null when it built. */
  buildError: Promise<GPUError | null>;
}

export class PipelineCache {
  private readonly modules = new Map<string, GPUShaderModule>();
  private readonly pipelines = new Map<string, KernelPipeline>();
  private readonly layouts = new Map<string, GPUBindGroupLayout>();
  /** Launchers reuse their spec objects: look those up without hashing the source again. */
  private readonly bySpec = new WeakMap<KernelSpec, KernelPipeline>();
  /** Number of pipelines compiled on demand (cache misses); a benchmark reports it. */
  compiled = 0;
  /** Number of pipelines compiled ahead of use by warm() (createComputePipelineAsync). */
  warmed = 0;

  /** Pipelines being compiled by warm(), by key. */
  private readonly pending = new Map<string, Promise<void>>();

  constructor(private readonly device: GPUDevice) {}

  /**
   * Compiles the specs not cached yet with createComputePipelineAsync and caches each as it
   * resolves. A get() of a spec still compiling compiles it on the spot (it cannot wait); a
   * build failure is swallowed here so that get() reports it with its error scope.
   */
  async warm(specs: readonly KernelSpec[]): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const spec of specs) {
      const key = pipelineKey(spec);
      if (this.pipelines.has(key)) continue;
      let wait = this.pending.get(key);
      if (!wait) {
        const layout = this.layoutFor(spec.bindings);
        wait = this.device
          .createComputePipelineAsync({
            label: `${spec.name}:${spec.entryPoint}`,
            layout: this.device.createPipelineLayout({ bindGroupLayouts: [layout] }),
            compute: { module: this.moduleFor(spec), entryPoint: spec.entryPoint, constants: spec.constants },
          })
          .then(
            (pipeline) => {
              if (this.pipelines.has(key)) return;
              this.pipelines.set(key, { spec, pipeline, layout, key, buildError: Promise.resolve(null) });
              this.warmed++;
            },
            () => {},
          )
          .finally(() => this.pending.delete(key));
        this.pending.set(key, wait);
      }
      waits.push(wait);
    }
    await Promise.all(waits);
  }

  get(spec: KernelSpec): KernelPipeline {
    const known = this.bySpec.get(spec);
    if (known) return known;
    const key = pipelineKey(spec);
    const hit = this.pipelines.get(key);
    if (hit) {
      this.bySpec.set(spec, hit);
      return hit;
    }
    const layout = this.layoutFor(spec.bindings);
    // Creation is synchronous, so this scope catches exactly this pipeline's errors.
    this.device.pushErrorScope('validation');
    const pipeline = this.device.createComputePipeline({
      label: `${spec.name}:${spec.entryPoint}`,
      layout: this.device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: { module: this.moduleFor(spec), entryPoint: spec.entryPoint, constants: spec.constants },
    });
    const buildError = this.device.popErrorScope();
    const entry = { spec, pipeline, layout, key, buildError };
    this.pipelines.set(key, entry);
    this.bySpec.set(spec, entry);
    this.compiled++;
    return entry;
  }

  private moduleFor(spec: KernelSpec): GPUShaderModule {
    let module = this.modules.get(spec.code);
    if (!module) {
      module = this.device.createShaderModule({ label: spec.name, code: spec.code });
      this.modules.set(spec.code, module);
    }
    return module;
  }

  private layoutFor(bindings: readonly BindingKind[]): GPUBindGroupLayout {
    const key = bindings.join(',');
    let layout = this.layouts.get(key);
    if (!layout) {
      layout = this.device.createBindGroupLayout({
        entries: bindings.map((type, binding) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type } })),
      });
      this.layouts.set(key, layout);
    }
    return layout;
  }
}

function pipelineKey(spec: KernelSpec): string {
  const constants = spec.constants
    ? Object.keys(spec.constants)
        .sort()
        .map((k) => `${k}=${spec.constants![k]}`)
        .join(';')
    : '';
  // The code itself is part of the key: two shaders may share a name while being edited.
  return `${spec.name}|${spec.entryPoint}|${constants}|${hashString(spec.code)}|${spec.code.length}`;
}

/** FNV-1a, enough to tell shader sources apart in a map key. */
function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
