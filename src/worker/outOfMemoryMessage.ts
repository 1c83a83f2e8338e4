// What the page says when an allocation did not fit on the GPU (the device itself still works):
// which buffer, that nothing committed was lost, where Resume goes on from, and what to do.
// Pure, so it is unit-tested.
import { describeAllocation, type RefusedAllocation } from '../gpu/bufferPool';
import type { DeviceLostAt } from './deviceLostMessage';

export function outOfMemoryMessage(refused: Pick<RefusedAllocation, 'label' | 'bytes'>, at: DeviceLostAt): string {
  const when = at.step === null ? 'while the run was open' : `during step ${at.step}`;
  const where =
    at.checkpointStep === null
      ? 'Nothing committed was lost, but the run has no checkpoint yet: Resume starts it again from step 0.'
      : `Nothing committed was lost, and the last checkpoint (step ${at.checkpointStep}) is intact.`;
  return (
    `The GPU ran out of memory: ${describeAllocation(refused)} did not fit ${when}, so the run stopped. ${where} ` +
    'Free GPU memory (close other tabs or apps that use the GPU) or lower generation_batch_size, max_completion_length or the model size, then press Resume.'
  );
}
