import type { Page } from 'playwright-core';
import type { HostileCase } from './hostileCases.mjs';

export { hostileCases } from './hostileCases.mjs';
export const LINK_BOUND_MS: number;
export const FILE_BOUND_MS: number;
export const HEAVY_BOUND_MS: number;
export const TRY_IT_BOUND_MS: number;

export interface FuzzFailure {
  id: number;
  kind: 'link' | 'runfile';
  category: string;
  note: string;
  problems: string[];
}
export interface FuzzTotals {
  cases: number;
  scriptsRun: number;
  hangs: number;
  uncaughtErrors: number;
  savedRunsChanged: number;
  unclearMessages: number;
  unexpectedOutcomes: number;
  opened: number;
  refused: number;
  maxLinkMs: number;
  maxFileMs: number;
  maxHeavyMs: number;
  /** Opened regex links scored in "Try it", and the slowest of them. */
  tryItRuns: number;
  maxTryItMs: number;
  maxStallMs: number;
  slowest: { id: number; kind: string; category: string; note: string; ms: number; stallMs: number }[];
  byCategory: Record<string, { cases: number; opened: number; refused: number; failed: number }>;
  failures: FuzzFailure[];
}
export function preparePage(page: Page): Promise<{ experiment: Record<string, unknown>; runFile: string; dbName: string }>;
export function runCases(options: { page: Page; pageErrors: Error[]; cases: HostileCase[]; dbName: string; log?: (line: string) => void; boundScale?: number }): Promise<FuzzTotals>;
export function summaryLine(totals: FuzzTotals): string;
