// In-page side of bench/matmul.mjs: square f32 matmul throughput of our WGSL kernels, the
// TensorFlow.js WebGPU backend, jax-js (WebGPU) and a plain-JS loop, all in this one page on
// the adapter each library finds (they ask navigator.gpu for the same default adapter).
//
// Method, the same for every engine: X <- X . B chained `repeats` times (each product needs
// the previous one, so a lazy engine cannot skip or fuse any away), then one scalar of the
// last X is read back; the clock covers recording, submission and that readback. B is
// N(0, 1/n), so X keeps its scale and never reaches denormals or infinities.
import { init as jaxInit, numpy as jnp, type Array as JaxArray } from '@jax-js/jax';
import { GpuRuntime } from '../src/gpu/runtime';
import { recordMatmul, type MatmulKernel } from '../src/ops/matmul';

/**
 * The slice of TensorFlow.js this page uses. bench/matmul.html imports tfjs-core and
 * tfjs-backend-webgpu and puts them on window.matmulPeers: typing them through an import
 * here would load tfjs's old global WebGPU declarations into the whole project's tsc run.
 */
interface TfTensor {
  dispose(): void;
  data(): Promise<ArrayLike<number>>;
}
interface TfLike {
  findBackendFactory(name: string): unknown;
  setBackend(name: string): Promise<boolean>;
  ready(): Promise<void>;
  tensor2d(values: Float32Array, shape: [number, number]): TfTensor;
  matMul(a: TfTensor, b: TfTensor): TfTensor;
  slice(x: TfTensor, begin: number[], size: number[]): TfTensor;
}

export type Engine = 'ours' | 'tfjs' | 'jax' | 'js';

export interface EngineResult {
  engine: Engine;
  /** The engine could not run here (no adapter, backend refused): why. */
  error?: string;
  /** Products per timed run. */
  repeats?: number;
  /** Seconds per timed run (each run is `repeats` chained products plus one scalar readback). */
  seconds?: number[];
  gflops?: number;
  /** Our kernel's choice for this shape. */
  kernel?: MatmulKernel;
}

export interface SquareConfig {
  size: number;
  engine: Engine;
  /** Aim for timed runs of about this long (repeats are picked from a warm-up run). */
  targetSeconds: number;
  runs: number;
  maxRepeats: number;
}

export interface DecodeConfig {
  m: number;
  size: number;
  /** 'auto' takes the small-M kernel; 'tiled' forces the 64x64 tile for comparison. */
  path: 'auto' | 'tiled' | 'tfjs';
  targetSeconds: number;
  runs: number;
  maxRepeats: number;
}

/** Deterministic N(0, scale^2) values (LCG + Box-Muller), f32. */
function gaussian(count: number, scale: number, seed: number): Float32Array {
  const out = new Float32Array(count);
  let s = seed >>> 0;
  const next = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s + 1) / 4294967297;
  };
  for (let i = 0; i < count; i++) out[i] = scale * Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next());
  return out;
}

interface Runner {
  /** Runs `repeats` chained products and reads back one scalar; returns seconds. */
  run(repeats: number): Promise<number>;
  dispose(): void;
  kernel?: MatmulKernel;
}

async function measure(make: () => Promise<Runner>, flopsPerProduct: number, cfg: { targetSeconds: number; runs: number; maxRepeats: number }) {
  const runner = await make();
  try {
    const warm = await runner.run(1); // compiles pipelines, allocates buffers
    // A second single product sizes the timed runs, unless one product already fills them
    // (large sizes on a software adapter, where every product costs tens of seconds).
    const probe = warm > 10 * cfg.targetSeconds ? warm : await runner.run(1);
    const repeats = Math.max(1, Math.min(cfg.maxRepeats, Math.round(cfg.targetSeconds / Math.max(probe, 1e-4))));
    const seconds: number[] = [];
    for (let r = 0; r < cfg.runs; r++) {
      seconds.push(await runner.run(repeats));
      if (seconds[r] > 5 * cfg.targetSeconds) break; // long runs vary little; one is enough
    }
    const best = Math.min(...seconds);
    return { repeats, seconds, gflops: (flopsPerProduct * repeats) / best / 1e9, kernel: runner.kernel };
  } finally {
    runner.dispose();
  }
}

function oursRunner(rt: GpuRuntime, m: number, size: number, path: 'auto' | 'tiled'): Runner {
  const x0 = rt.upload(gaussian(m * size, 1, 1), 'bench.x0');
  const x1 = rt.storage(m * size * 4, 'bench.x1');
  const b = rt.upload(gaussian(size * size, 1 / Math.sqrt(size), 2), 'bench.b');
  const shape = { m, n: size, k: size, path };
  const runner: Runner = {
    async run(repeats) {
      const t0 = performance.now();
      const rec = rt.recorder('bench.matmul');
      let [src, dst] = [x0, x1];
      for (let i = 0; i < repeats; i++) {
        runner.kernel = recordMatmul(rt, rec, { a: src, b, c: dst }, shape);
        [src, dst] = [dst, src];
      }
      const probe = rec.readF32(src, 1);
      await rec.submit();
      const value = (await probe)[0];
      if (!Number.isFinite(value)) throw new Error(`our matmul produced ${value}`);
      return (performance.now() - t0) / 1000;
    },
    dispose: () => rt.release(x0, x1, b),
  };
  return runner;
}

let tfReady: Promise<string | null> | null = null;

/** Switches TensorFlow.js to its WebGPU backend; resolves to an error message or null. */
function tfjsWebGpu(): Promise<string | null> {
  tfReady ??= (async () => {
    const tf = window.matmulPeers?.tf;
    if (!tf) return 'TensorFlow.js did not load (window.matmulPeers.tf is missing)';
    if (!tf.findBackendFactory('webgpu')) return 'tfjs-backend-webgpu registered no backend (navigator.gpu missing?)';
    try {
      if (!(await tf.setBackend('webgpu'))) return 'tf.setBackend("webgpu") failed (no adapter or device)';
    } catch (err) {
      return `tf.setBackend("webgpu") threw: ${(err as Error).message}`;
    }
    await tf.ready();
    return null;
  })();
  return tfReady;
}

async function tfjsRunner(m: number, size: number): Promise<Runner> {
  const error = await tfjsWebGpu();
  if (error) throw new Error(error);
  const tf = window.matmulPeers!.tf;
  const x0 = tf.tensor2d(gaussian(m * size, 1, 1), [m, size]);
  const b = tf.tensor2d(gaussian(size * size, 1 / Math.sqrt(size), 2), [size, size]);
  return {
    async run(repeats) {
      const t0 = performance.now();
      let x = x0;
      for (let i = 0; i < repeats; i++) {
        const next = tf.matMul(x, b);
        if (x !== x0) x.dispose();
        x = next;
      }
      const corner = tf.slice(x, [0, 0], [1, 1]);
      const value = (await corner.data())[0];
      corner.dispose();
      x.dispose();
      if (!Number.isFinite(value)) throw new Error(`tf.matMul produced ${value}`);
      return (performance.now() - t0) / 1000;
    },
    dispose: () => {
      x0.dispose();
      b.dispose();
    },
  };
}

let jaxReady: Promise<string | null> | null = null;

function jaxWebGpu(): Promise<string | null> {
  jaxReady ??= (async () => {
    try {
      const devices = await jaxInit('webgpu');
      return devices.includes('webgpu') ? null : `jax-js init("webgpu") found no WebGPU device (got: ${devices.join(', ') || 'none'})`;
    } catch (err) {
      return `jax-js init("webgpu") threw: ${(err as Error).message}`;
    }
  })();
  return jaxReady;
}

async function jaxRunner(m: number, size: number): Promise<Runner> {
  const error = await jaxWebGpu();
  if (error) throw new Error(error);
  // jax-js counts references: every op consumes its arguments, `.ref` keeps one alive.
  const x0: JaxArray = await jnp.array(gaussian(m * size, 1, 1), { shape: [m, size], device: 'webgpu' }).blockUntilReady();
  const b: JaxArray = await jnp.array(gaussian(size * size, 1 / Math.sqrt(size), 2), { shape: [size, size], device: 'webgpu' }).blockUntilReady();
  return {
    async run(repeats) {
      const t0 = performance.now();
      let x = x0.ref;
      for (let i = 0; i < repeats; i++) x = jnp.matmul(x, b.ref);
      // Realize the whole product before slicing, so laziness cannot shrink the last one.
      x = await x.blockUntilReady();
      const value = (await x.slice(0, 0).data())[0];
      if (!Number.isFinite(value)) throw new Error(`jax-js matmul produced ${value}`);
      return (performance.now() - t0) / 1000;
    },
    dispose: () => {
      x0.dispose();
      b.dispose();
    },
  };
}

/** Plain JS, i-k-j loop order over Float32Arrays (row-major, unit-stride inner loop). */
function jsRunner(size: number): Runner {
  let x: Float32Array = gaussian(size * size, 1, 1);
  let y: Float32Array = new Float32Array(size * size);
  const b = gaussian(size * size, 1 / Math.sqrt(size), 2);
  return {
    async run(repeats) {
      const t0 = performance.now();
      for (let r = 0; r < repeats; r++) {
        y.fill(0);
        for (let i = 0; i < size; i++) {
          const row = i * size;
          for (let p = 0; p < size; p++) {
            const xv = x[row + p];
            const bRow = p * size;
            for (let j = 0; j < size; j++) y[row + j] += xv * b[bRow + j];
          }
        }
        [x, y] = [y, x];
      }
      if (!Number.isFinite(x[0])) throw new Error(`plain JS produced ${x[0]}`);
      return (performance.now() - t0) / 1000;
    },
    dispose: () => {},
  };
}

async function square(rt: GpuRuntime, cfg: SquareConfig): Promise<EngineResult> {
  const { size, engine } = cfg;
  const make: Record<Engine, () => Promise<Runner>> = {
    ours: async () => oursRunner(rt, size, size, 'auto'),
    tfjs: () => tfjsRunner(size, size),
    jax: () => jaxRunner(size, size),
    js: async () => jsRunner(size),
  };
  try {
    const r = await measure(make[engine], 2 * size ** 3, cfg);
    return { engine, repeats: r.repeats, seconds: r.seconds, gflops: r.gflops, ...(r.kernel ? { kernel: r.kernel } : {}) };
  } catch (err) {
    return { engine, error: (err as Error).message };
  }
}

/** Decode-time rows: [m, size] . [size, size], small-M kernel vs forced tile vs tf.matMul. */
async function decode(rt: GpuRuntime, cfg: DecodeConfig): Promise<EngineResult> {
  const engine: Engine = cfg.path === 'tfjs' ? 'tfjs' : 'ours';
  const make = cfg.path === 'tfjs' ? () => tfjsRunner(cfg.m, cfg.size) : async () => oursRunner(rt, cfg.m, cfg.size, cfg.path as 'auto' | 'tiled');
  try {
    const r = await measure(make, 2 * cfg.m * cfg.size ** 2, cfg);
    return { engine, repeats: r.repeats, seconds: r.seconds, gflops: r.gflops, ...(r.kernel ? { kernel: r.kernel } : {}) };
  } catch (err) {
    return { engine, error: (err as Error).message };
  }
}

declare global {
  interface Window {
    matmulPeers?: { tf: TfLike };
    matmulBench: {
      square(cfg: SquareConfig): Promise<EngineResult>;
      decode(cfg: DecodeConfig): Promise<EngineResult>;
      adapter: GpuRuntime['info'];
    };
    matmulBenchReady: Promise<string | null>;
  }
}

window.matmulBenchReady = GpuRuntime.create().then(
  (rt) => {
    window.matmulBench = { square: (cfg) => square(rt, cfg), decode: (cfg) => decode(rt, cfg), adapter: rt.info };
    return null;
  },
  (err: Error) => err.message,
);
