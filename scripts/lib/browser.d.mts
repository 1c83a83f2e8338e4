import type { BrowserContext, Page } from 'playwright-core';

export const repoRoot: string;
export const CHROMIUM_FLAGS: string[];
export function chromiumExecutable(): Promise<string>;

export interface OpenedPage {
  page: Page;
  url: string;
  pageErrors: Error[];
  close(): Promise<void>;
}
export function openPage(path: string, options?: { log?: ((line: string) => void) | null; webgpu?: boolean; calibrate?: boolean }): Promise<OpenedPage>;

export interface OpenedUrl extends OpenedPage {
  context: BrowserContext;
}
/** Opens a page another server serves (no Vite dev server); `close` stops the browser. */
export function openUrl(url: string, options?: { log?: ((line: string) => void) | null; webgpu?: boolean; calibrate?: boolean }): Promise<OpenedUrl>;

export interface GpuInfoJson {
  vendor: string;
  architecture: string;
  description: string;
  isFallback: boolean;
  features: string[];
  limits: Record<string, number>;
}
export interface Harness extends OpenedPage {
  info: GpuInfoJson;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  run(name: string, request: unknown): Promise<any>;
  /** Runs export `fn(runtime, input)` of a page module such as '/test/harness/matmulCases.ts'. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  runModule(path: string, fn: string, input: unknown): Promise<any>;
  evaluate<R, A>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R>;
}
export function openHarness(): Promise<Harness>;
