// Acquires a WebGPU device with the limits and features our kernels want, and reports
// what was granted. Device loss is surfaced to the caller, never swallowed.

/** Thrown when this browser or machine offers no usable WebGPU adapter. */
export class WebGpuUnavailableError extends Error {
  constructor(readonly reason: string) {
    super(
      `WebGPU is not available: ${reason}. Use a recent Chrome or Edge (113+) on a machine with a ` +
        `supported GPU, or Chrome with --enable-unsafe-webgpu (Linux); Safari 26+ and Firefox 141+ ` +
        `(Windows) also ship WebGPU. The page must be served over https or from localhost.`,
    );
    this.name = 'WebGpuUnavailableError';
  }
}

export interface GpuInfo {
  vendor: string;
  architecture: string;
  description: string;
  /** True for software adapters (SwiftShader, WARP, lavapipe): fine for tests, slow. */
  isFallback: boolean;
  /**
   * Invocations per subgroup, when the device has the 'subgroups' feature and the adapter
   * reports a single size (subgroupMinSize = subgroupMaxSize; 4 on SwiftShader); else absent.
   */
  subgroupSize?: number;
  features: string[];
  limits: Record<string, number>;
}

export interface AcquiredGpu {
  adapter: GPUAdapter;
  device: GPUDevice;
  info: GpuInfo;
  /** Resolves when the device is lost (destroyed or crashed); callers decide what to do. */
  lost: Promise<GPUDeviceLostInfo>;
}

/** Limits we raise to the adapter's maximum because large vocabularies and models need them. */
const RAISED_LIMITS = [
  'maxBufferSize',
  'maxStorageBufferBindingSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
] as const;

/** Features used when present; every kernel also has a path without them. */
const OPTIONAL_FEATURES: GPUFeatureName[] = ['shader-f16', 'subgroups', 'timestamp-query'];

const REPORTED_LIMITS = [...RAISED_LIMITS, 'maxUniformBufferBindingSize', 'minStorageBufferOffsetAlignment'] as const;

export interface AcquireOptions {
  powerPreference?: GPUPowerPreference;
  /** Ask for optional features (default true). Tests can turn this off to exercise the plain path. */
  optionalFeatures?: boolean;
  gpu?: GPU;
}

export async function acquireGpu(options: AcquireOptions = {}): Promise<AcquiredGpu> {
  const gpu = options.gpu ?? (typeof navigator !== 'undefined' ? navigator.gpu : undefined);
  if (!gpu) throw new WebGpuUnavailableError('navigator.gpu is missing in this browser or context');
  const adapter = await gpu.requestAdapter({ powerPreference: options.powerPreference ?? 'high-performance' });
  if (!adapter) throw new WebGpuUnavailableError('the browser returned no GPU adapter');

  const requiredLimits: Record<string, number> = {};
  for (const name of RAISED_LIMITS) requiredLimits[name] = adapter.limits[name];
  const requiredFeatures =
    options.optionalFeatures === false ? [] : OPTIONAL_FEATURES.filter((f) => adapter.features.has(f));

  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
  } catch (err) {
    throw new WebGpuUnavailableError(`the adapter refused a device (${(err as Error).message})`);
  }

  const limits: Record<string, number> = {};
  for (const name of REPORTED_LIMITS) limits[name] = device.limits[name];
  const adapterInfo = adapter.info;
  const info: GpuInfo = {
    vendor: adapterInfo.vendor,
    architecture: adapterInfo.architecture,
    description: adapterInfo.description,
    isFallback: adapterInfo.architecture === 'swiftshader' || (adapterInfo as { isFallbackAdapter?: boolean }).isFallbackAdapter === true,
    features: [...device.features].sort(),
    limits,
  };
  const sizes = adapterInfo as { subgroupMinSize?: number; subgroupMaxSize?: number };
  if (device.features.has('subgroups') && sizes.subgroupMinSize && sizes.subgroupMinSize === sizes.subgroupMaxSize) {
    info.subgroupSize = sizes.subgroupMinSize;
  }
  return { adapter, device, info, lost: device.lost };
}
