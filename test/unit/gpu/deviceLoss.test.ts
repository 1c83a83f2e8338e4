// DeviceLossWatch (a lost device never settles its awaits, so they are raced against the loss)
// and the message the page shows when the trainer's device is lost. No GPU needed: `lost` is a
// promise the test resolves.
import { describe, expect, it } from 'vitest';
import { DeviceLossWatch, GpuDeviceLostError } from '../../../src/gpu/deviceLoss';
import { deviceLostMessage } from '../../../src/worker/deviceLostMessage';

function device() {
  let lose!: (info: GPUDeviceLostInfo) => void;
  const lost = new Promise<GPUDeviceLostInfo>((r) => (lose = r));
  return { watch: new DeviceLossWatch(lost), lose: (reason = 'destroyed', message = 'Device was destroyed.') => lose({ reason, message } as GPUDeviceLostInfo) };
}
const never = <T>() => new Promise<T>(() => {});
const tick = () => new Promise((r) => setTimeout(r, 0));

describe('DeviceLossWatch', () => {
  it('passes results and errors through while the device works', async () => {
    const { watch } = device();
    await expect(watch.race(Promise.resolve(7))).resolves.toBe(7);
    expect(watch.lost).toBeNull();
  });

  it('fails a pending await that would never settle once the device is lost', async () => {
    const { watch, lose } = device();
    const pending = watch.race(never<number>());
    lose();
    await expect(pending).rejects.toBeInstanceOf(GpuDeviceLostError);
    await expect(pending).rejects.toThrow('the GPU device was lost (destroyed: Device was destroyed.)');
    expect(watch.lost?.reason).toBe('destroyed');
    // Later awaits fail at once.
    await expect(watch.race(never())).rejects.toBe(watch.lost);
  });

  it('reports a rejection caused by the loss (a map aborted before `lost` resolved) as the loss', async () => {
    const { watch, lose } = device();
    const aborted = watch.race(Promise.reject(new DOMException('Buffer was unmapped before mapping was resolved.', 'AbortError')));
    await tick();
    lose('unknown', '');
    await expect(aborted).rejects.toBeInstanceOf(GpuDeviceLostError);
  });

  it('keeps an ordinary rejection when the device is not lost', async () => {
    const { watch } = device();
    await expect(watch.race(Promise.reject(new Error('validation')))).rejects.toThrow('validation');
  });

  it('holds nothing for awaits that settled (no growth over a long run)', async () => {
    const { watch } = device();
    for (let i = 0; i < 1000; i++) await watch.race(Promise.resolve(i));
    expect((watch as unknown as { waiting: Set<unknown> }).waiting.size).toBe(0);
  });
});

describe('deviceLostMessage', () => {
  const loss = { reason: 'destroyed', detail: 'Device was destroyed.' };

  it('says what happened, during which step, where Resume starts and what to do', () => {
    expect(deviceLostMessage(loss, { step: 4, checkpointStep: 3 })).toBe(
      'The GPU device was lost (destroyed: Device was destroyed.) during step 4. Nothing committed was lost: the run can resume ' +
        'from its last checkpoint (step 3). Reload the page or press Resume to continue on a new GPU device.',
    );
  });

  it('without a checkpoint, says Resume starts again from step 0', () => {
    expect(deviceLostMessage(loss, { step: 0, checkpointStep: null })).toContain('the run has no checkpoint yet: Resume starts it again from step 0.');
  });

  it('an unexplained loss names the likely causes; a loss between steps names no step', () => {
    const m = deviceLostMessage({ reason: 'unknown', detail: '' }, { step: null, checkpointStep: 2 });
    expect(m).toMatch(/^The GPU device was lost \(unknown\) while the run was open\. The GPU driver may have restarted, or the GPU ran out of memory/);
    expect(m).toContain('last checkpoint (step 2)');
  });
});
