// The Hub (or a server laid out like it) as a ModelFileSource: each file comes from the model
// cache when it is there, else from the network, streamed with progress and then cached.
import { downloadFile } from './download';
import { DownloadCancelledError, MissingFileError } from './errors';
import { resolveUrl, type HubModelRef } from './hubId';
import { ModelCache, ModelCacheQuotaError, type CacheKeyParts } from './modelCache';
import type { ModelFileSource } from './assemble';
import type { ProgressTracker } from './progress';

export interface FileRecord {
  file: string;
  bytes: number;
  fromCache: boolean;
}

export interface HubSourceOptions {
  ref: HubModelRef;
  endpoint: string;
  /** null: no caching (switched off, or the browser has no Cache API). */
  cache: ModelCache | null;
  tracker: ProgressTracker;
  signal?: AbortSignal;
  fetchImpl?: typeof fetch;
}

export interface HubSource extends ModelFileSource {
  /** Every file read, in order. */
  readonly files: FileRecord[];
  /** Why caching stopped partway (e.g. a full quota), or null. */
  readonly cacheError: string | null;
}

export function hubSource(options: HubSourceOptions): HubSource {
  const { ref, endpoint, tracker, signal } = options;
  let cache = options.cache;
  const files: FileRecord[] = [];
  let cacheError: string | null = null;
  const parts = (file: string): CacheKeyParts => ({ endpoint, id: ref.id, revision: ref.revision, file });

  async function store(file: string, write: (c: ModelCache) => Promise<void>): Promise<void> {
    if (!cache) return;
    try {
      await write(cache);
    } catch (err) {
      // The model still loads from memory; caching stops for the rest of this load.
      cacheError = err instanceof ModelCacheQuotaError ? err.message : `could not cache ${file} (${(err as Error).message}); caching is off for this load`;
      cache = null;
    }
  }

  async function read(file: string): Promise<ArrayBuffer> {
    if (signal?.aborted) throw new DownloadCancelledError(file);
    const cached = cache ? await cache.get(parts(file)) : null;
    if (cached && 'missing' in cached) throw new MissingFileError(file, `not in ${ref.id}@${ref.revision} (remembered from an earlier download)`);
    if (cached) {
      tracker.begin(file, cached.bytes.byteLength, true);
      tracker.advance(file, cached.bytes.byteLength);
      tracker.end(file);
      files.push({ file, bytes: cached.bytes.byteLength, fromCache: true });
      return cached.bytes;
    }
    let bytes: ArrayBuffer;
    try {
      bytes = await downloadFile(resolveUrl(endpoint, ref.id, ref.revision, file), {
        file,
        signal,
        fetchImpl: options.fetchImpl,
        onStart: (total) => tracker.begin(file, total, false),
        onBytes: (n) => tracker.advance(file, n),
      });
    } catch (err) {
      if (err instanceof MissingFileError) await store(file, (c) => c.putMissing(parts(file)));
      throw err;
    }
    tracker.end(file);
    files.push({ file, bytes: bytes.byteLength, fromCache: false });
    await store(file, (c) => c.put(parts(file), bytes));
    return bytes;
  }

  return {
    where: `${endpoint}/${ref.id} (revision ${ref.revision})`,
    read,
    expect: (names) => tracker.expect(names),
    files,
    get cacheError() {
      return cacheError;
    },
  };
}
