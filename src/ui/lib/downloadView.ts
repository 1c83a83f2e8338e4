// What the download panel shows while a Hub model's files arrive: the worker's progress events
// folded into one summary (overall bytes and percent, the file in progress, speed, time left,
// which finished files came from the cache), and the wording of sizes, speeds and durations.
import type { DownloadProgress } from '../../model/hub/progress';
import { formatBytes } from '../../model/memory';

export interface DownloadSummary {
  /** The file of the latest event. */
  file: string;
  fileFromCache: boolean;
  loaded: number;
  /** Null until every known file's size is known. */
  total: number | null;
  /** 0–100, or null while the total is unknown. */
  percent: number | null;
  bytesPerSecond: number;
  etaSeconds: number | null;
  filesDone: number;
  filesKnown: number;
  /** Finished files read from the model cache, and finished files downloaded. */
  cachedFiles: string[];
  downloadedFiles: string[];
}

/** Folds one progress event into the running summary (null: the first event). */
export function summarize(previous: DownloadSummary | null, p: DownloadProgress): DownloadSummary {
  const cachedFiles = previous?.cachedFiles ?? [];
  const downloadedFiles = previous?.downloadedFiles ?? [];
  const finished = p.done && !cachedFiles.includes(p.file) && !downloadedFiles.includes(p.file);
  const { total, loaded } = p.overall;
  return {
    file: p.file,
    fileFromCache: p.fromCache,
    loaded,
    total,
    percent: total === null ? null : total === 0 ? 100 : Math.min(100, (100 * loaded) / total),
    bytesPerSecond: p.bytesPerSecond,
    etaSeconds: p.overall.etaSeconds,
    filesDone: p.overall.filesDone,
    filesKnown: p.overall.filesKnown,
    cachedFiles: finished && p.fromCache ? [...cachedFiles, p.file] : cachedFiles,
    downloadedFiles: finished && !p.fromCache ? [...downloadedFiles, p.file] : downloadedFiles,
  };
}

/** "12 s", "3 min 05 s", "1 h 02 min"; "unknown" when there is no estimate. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return 'unknown';
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

export function formatSpeed(bytesPerSecond: number): string {
  return bytesPerSecond > 0 ? `${formatBytes(bytesPerSecond)}/s` : '—';
}

/** "1.2 MiB of 3.4 MiB" (or "1.2 MiB so far" while the total is unknown). */
export function formatAmount(s: DownloadSummary): string {
  return s.total === null ? `${formatBytes(s.loaded)} so far` : `${formatBytes(s.loaded)} of ${formatBytes(s.total)}`;
}
