// The entry point for Hub models: an id → ModelFiles ready for loadModel, through the model
// cache, with progress and cancel. Files picked from disk take the same path (localFiles.ts).
import type { ModelFiles } from '../load';
import { assembleModelFiles } from './assemble';
import { normalizeEndpoint, parseHubId, type HubModelRef } from './hubId';
import { hubSource, type FileRecord } from './hubSource';
import { ModelCache } from './modelCache';
import { ProgressTracker, type ProgressListener } from './progress';

export interface HubFetchOptions {
  /** Branch, tag or commit; the id may name one instead ("owner/name@v1"). Default "main". */
  revision?: string;
  /** The Hub's URL, or a server or path laid out like it. Default https://huggingface.co. */
  endpoint?: string;
  onProgress?: ProgressListener;
  /** Aborting rejects with DownloadCancelledError ("download cancelled"). */
  signal?: AbortSignal;
  /** Use the Cache API (default true). Where the browser lacks it, files just download. */
  cache?: boolean;
  /** Replaces fetch (tests count requests with it). */
  fetch?: typeof fetch;
  /** Seconds, monotonic, for progress speeds (tests). */
  now?: () => number;
}

export interface HubLoadReport extends HubModelRef {
  endpoint: string;
  files: FileRecord[];
  /** 'used', 'off' (cache: false) or 'unavailable' (no Cache API here). */
  cache: 'used' | 'off' | 'unavailable';
  /** Why caching stopped partway (a full quota, explained), or null. */
  cacheError: string | null;
  networkBytes: number;
  cachedBytes: number;
}

export interface HubModelFiles extends ModelFiles {
  hub: HubLoadReport;
}

export async function fetchHubModelFiles(id: string, options: HubFetchOptions = {}): Promise<HubModelFiles> {
  const ref = parseHubId(id, options.revision);
  const endpoint = normalizeEndpoint(options.endpoint);
  const cache = options.cache === false ? null : await ModelCache.open();
  const source = hubSource({
    ref,
    endpoint,
    cache,
    tracker: new ProgressTracker(options.onProgress, options.now),
    signal: options.signal,
    fetchImpl: options.fetch,
  });
  const files = await assembleModelFiles(source);
  const sum = (fromCache: boolean) => source.files.reduce((s, f) => s + (f.fromCache === fromCache ? f.bytes : 0), 0);
  return {
    ...files,
    hub: {
      ...ref,
      endpoint,
      files: source.files,
      cache: options.cache === false ? 'off' : cache ? 'used' : 'unavailable',
      cacheError: source.cacheError,
      networkBytes: sum(false),
      cachedBytes: sum(true),
    },
  };
}
