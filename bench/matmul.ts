// In-page side of bench/matmul.mjs: square f32 matmul throughput of our WGSL kernels, the
// TensorFlow.js WebGPU backend, jax-js (WebGPU) and a plain-JS loop, all in this one page on
// the adapter each library finds (they ask navigator.gpu for the same default adapter).
//
// Method, the same for every engine: X <- X . B chained `repeats` times (each product needs
// the previous one, so a lazy engine cannot skip or fuse any away), then one scalar of the
// last X is read back; the clock covers recording, submission and that readback. B is
// N(0, 1/n), so X keeps its scale and never reaches denormals or infinities. The page keeps
// one runner per engine and size (prepare / timed / dispose); bench/matmul.mjs decides the
// repeats and the order, interleaving the engines round by round.
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

/** [m, k] x [k, n] products; chained (each one's output the next one's input) when n = k, else all from the same input. */
function oursRunner(rt: GpuRuntime, m: number, n: number, k: number, path: 'auto' | 'tiled'): Runner {
  const x0 = rt.upload(gaussian(m * Math.max(n, k), 1, 1), 'bench.x0');
  const x1 = rt.storage(m * Math.max(n, k) * 4, 'bench.x1');
  const b = rt.upload(gaussian(k * n, 1 / Math.sqrt(k), 2), 'bench.b');
  const shape = { m, n, k, path };
  const runner: Runner = {
    async run(repeats) {
      const t0 = performance.now();
      const rec = rt.recorder('bench.matmul');
      let [src, dst] = [x0, x1];
      for (let i = 0; i < repeats; i++) {
        runner.kernel = recordMatmul(rt, rec, { a: src, b, c: dst }, shape);
        if (n === k) [src, dst] = [dst, src];
      }
      const probe = rec.readF32(n === k ? src : dst, 1);
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

/** What one runner multiplies: a square product of one engine, a decode-time row or a shape of one path. */
export interface RunnerSpec {
  m: number;
  size: number;
  /** Ours only: [m, k] x [k, n] instead of [m, size] x [size, size]. */
  n?: number;
  k?: number;
  engine: Engine;
  /** Our kernel choice ('tiled' forces the 64x64 tile); ignored for the peers. */
  path?: 'auto' | 'tiled';
}

/**
 * Runners kept alive between calls, so the driver can interleave engines round by round and
 * sample the browser's CPU time around each timed block (bench/matmul.mjs).
 */
const runners = new Map<string, Runner>();

function makeRunner(rt: GpuRuntime, spec: RunnerSpec): Promise<Runner> {
  const { m, size, engine } = spec;
  if (engine === 'ours') return Promise.resolve(oursRunner(rt, m, spec.n ?? size, spec.k ?? size, spec.path ?? 'auto'));
  if (engine === 'tfjs') return tfjsRunner(m, size);
  if (engine === 'jax') return jaxRunner(m, size);
  if (m !== size) return Promise.reject(new Error('the plain-JS engine runs square products only'));
  return Promise.resolve(jsRunner(size));
}

export interface Prepared {
  error?: string;
  /** The untimed first product's seconds (pipeline compilation, allocation included). */
  warmSeconds?: number;
  kernel?: MatmulKernel;
}

/** Makes the runner `id` and runs one untimed product (compiles pipelines, allocates buffers). */
async function prepare(rt: GpuRuntime, id: string, spec: RunnerSpec): Promise<Prepared> {
  dispose(id);
  try {
    const runner = await makeRunner(rt, spec);
    runners.set(id, runner);
    const warmSeconds = await runner.run(1);
    return { warmSeconds, ...(runner.kernel ? { kernel: runner.kernel } : {}) };
  } catch (err) {
    dispose(id);
    return { error: (err as Error).message };
  }
}

/** One timed block of `repeats` chained products plus the scalar readback: its seconds, or why it failed. */
async function timed(id: string, repeats: number): Promise<{ seconds?: number; error?: string }> {
  const runner = runners.get(id);
  if (!runner) return { error: `no runner ${id} (prepare it first)` };
  try {
    return { seconds: await runner.run(repeats) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

function dispose(id: string): void {
  runners.get(id)?.dispose();
  runners.delete(id);
}

declare global {
  interface Window {
    matmulPeers?: { tf: TfLike };
    matmulBench: {
      prepare(id: string, spec: RunnerSpec): Promise<Prepared>;
      timed(id: string, repeats: number): Promise<{ seconds?: number; error?: string }>;
      dispose(id: string): void;
      adapter: GpuRuntime['info'];
    };
    matmulBenchReady: Promise<string | null>;
  }
}

window.matmulBenchReady = GpuRuntime.create().then(
  (rt) => {
    window.matmulBench = { prepare: (id, spec) => prepare(rt, id, spec), timed, dispose, adapter: rt.info };
    return null;
  },
  (err: Error) => err.message,
);
