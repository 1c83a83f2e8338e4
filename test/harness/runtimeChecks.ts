// Scenarios for test/browser/runtime.test.ts that must run inside the page (they need a
// real GPUDevice). Each returns plain data for the Node side to assert on.
import { GpuRuntime } from '../../src/gpu/runtime';
import { recordLogprobsForward } from '../../src/ops/logprobs';
import type { KernelSpec } from '../../src/gpu/pipelineCache';

const FILL: KernelSpec = {
  name: 'test.fill',
  code: `
    @group(0) @binding(0) var<storage, read_write> out: array<f32>;
    override VALUE: f32 = 1.0;
    @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
      if (id.x < arrayLength(&out)) { out[id.x] = out[id.x] + VALUE; }
    }`,
  entryPoint: 'main',
  bindings: ['storage'],
};

export async function poolReuse(rt: GpuRuntime) {
  const before = rt.pool.snapshot();
  const a = rt.storage(1000, 'a');
  rt.release(a);
  const b = rt.storage(980, 'b'); // same bucket (960..1024] as 1000 bytes
  const c = rt.storage(5000, 'c'); // a different bucket: a new buffer
  const after = rt.pool.snapshot();
  rt.release(b, c);
  let doubleRelease = '';
  try {
    rt.release(b);
  } catch (err) {
    doubleRelease = (err as Error).message;
  }
  return {
    sameBuffer: a === b,
    created: after.created - before.created,
    reused: after.reused - before.reused,
    sizes: [a.size, c.size],
    doubleRelease,
  };
}

export async function manyDispatchesOneSubmit(rt: GpuRuntime) {
  const before = { ...rt.counters };
  const compiledBefore = rt.pipelines.compiled;
  const rec = rt.recorder('test.many');
  const out = rt.storage(256 * 4, 'test.out');
  rec.copy(rt.upload(new Float32Array(256)), out, 256 * 4);
  for (let i = 0; i < 50; i++) rec.dispatch(rt.pipeline(FILL), [out], 4);
  // A second pipeline built from the same spec with another constant is a separate cache entry.
  for (let i = 0; i < 3; i++) rec.dispatch(rt.pipeline({ ...FILL, constants: { VALUE: 10 } }), [out], 4);
  const first = rec.readF32(out, 1);
  const last = rec.readF32(out, 1, 255);
  await rec.submit();
  const values = [(await first)[0], (await last)[0]];
  rt.release(out);
  return {
    values,
    submits: rt.counters.submits - before.submits,
    dispatches: rt.counters.dispatches - before.dispatches,
    readbacks: rt.counters.readbacks - before.readbacks,
    bytesRead: rt.counters.bytesRead - before.bytesRead,
    compiled: rt.pipelines.compiled - compiledBefore,
  };
}

export async function brokenShader(rt: GpuRuntime) {
  const rec = rt.recorder('test.broken');
  const out = rt.storage(64, 'test.out');
  rec.dispatch(rt.pipeline({ ...FILL, name: 'test.broken', code: FILL.code.replace('out[id.x] + VALUE', 'out[id.x] + missing') }), [out], 1);
  try {
    await rec.submit();
    return 'no error';
  } catch (err) {
    return (err as Error).message;
  } finally {
    rt.release(out);
  }
}

export async function oversizedLogits(rt: GpuRuntime) {
  const rec = rt.recorder('test.oversized');
  const dummy = rt.storage(16);
  try {
    recordLogprobsForward(rt, rec, dummy, dummy, { rows: 100_000, vocab: 151_936, temperature: 1 });
    return 'no error';
  } catch (err) {
    return (err as Error).message;
  } finally {
    rt.release(dummy);
  }
}

/** Uses its own runtime: destroys the device and reports what callers see. */
export async function deviceLoss() {
  const rt = await GpuRuntime.create();
  rt.device.destroy();
  const info = await rt.lost;
  let recorderError = '';
  try {
    rt.recorder();
  } catch (err) {
    recorderError = (err as Error).message;
  }
  return { reason: info.reason, lostMessage: rt.lostMessage, recorderError };
}

/**
 * Destroys the device while a submission and its readback are pending, and reports how they
 * ended: a destroyed device may never settle them (they hung before), so each must either have
 * finished or fail with GpuDeviceLostError, within the wait.
 */
export async function readbackDuringLoss(input: { waitMs: number }) {
  const rt = await GpuRuntime.create();
  const buffer = rt.upload(new Float32Array(1 << 16));
  const rec = rt.recorder();
  rec.dispatch(rt.pipeline({ ...FILL, constants: { VALUE: 2 } }), [buffer], 1 << 10);
  const read = rec.readF32(buffer, 1 << 16);
  const submitted = rec.submit();
  rt.device.destroy();
  const t0 = performance.now();
  const describe = (r: PromiseSettledResult<unknown>) => (r.status === 'fulfilled' ? 'finished' : `${(r.reason as Error).name}: ${(r.reason as Error).message}`);
  const outcome = await Promise.race([
    Promise.allSettled([submitted, read]).then((rs) => rs.map(describe)),
    new Promise<string>((r) => setTimeout(() => r('still pending'), input.waitMs)),
  ]);
  return { outcome, ms: performance.now() - t0 };
}

/** GpuRuntime.profileKernels: every dispatch of the recordings made inside, timed, results unchanged. */
export async function profiledDispatches(rt: GpuRuntime) {
  const { kernelTotals } = await import('../../src/gpu/kernelProfiler');
  const out = rt.storage(256 * 4, 'test.profiled');
  const zero = rt.upload(new Float32Array(256));
  const { result, timings } = await rt.profileKernels(async () => {
    const a = rt.recorder('test.profiled.a');
    a.copy(zero, out, 256 * 4);
    for (let i = 0; i < 3; i++) a.dispatch(rt.pipeline(FILL), [out], 4);
    a.dispatch(rt.pipeline({ ...FILL, constants: { VALUE: 10 } }), [out], 2);
    await a.submit();
    const b = rt.recorder('test.profiled.b');
    b.dispatch(rt.pipeline(FILL), [out], 4);
    const read = b.readF32(out, 256);
    await b.submit();
    let nested = '';
    await rt.profileKernels(async () => null).catch((err: Error) => (nested = err.message));
    return { values: Array.from(await read), nested };
  });
  // After the profile, recordings are plain again: nothing more is timed.
  const after = rt.recorder('test.unprofiled');
  after.dispatch(rt.pipeline(FILL), [out], 4);
  await after.submit();
  rt.release(out, zero);
  return {
    first: result.values[0],
    last: result.values[255],
    nested: result.nested,
    kernels: timings.map((t) => t.kernel),
    workgroups: timings.map((t) => t.workgroups),
    allTimed: timings.every((t) => Number.isFinite(t.ms) && t.ms >= 0),
    totals: kernelTotals(timings).map((k) => [k.kernel, k.dispatches]),
    shares: kernelTotals(timings).reduce((s, k) => s + k.share, 0),
  };
}
