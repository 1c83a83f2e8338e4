import type { GpuRuntime } from '../gpu/runtime';
export async function groupAdvantageRequest(_rt: GpuRuntime, _request: unknown): Promise<object> {
  throw new Error('in progress');
}
