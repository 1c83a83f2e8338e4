// One file over HTTP, streamed: progress as bytes arrive, cancel through an AbortSignal,
// errors that name the file. "Not found" (404, or a dev server's index.html in its place) is a
// MissingFileError, so callers can probe optional files.
import { DownloadCancelledError, HubHttpError, MissingFileError } from './errors';

export interface DownloadOptions {
  /** The file's name in the repository, for messages. */
  file: string;
  signal?: AbortSignal;
  fetchImpl?: typeof fetch;
  /** Called once the response is accepted, with its size when the server said it. */
  onStart?: (total: number | null) => void;
  onBytes?: (bytes: number) => void;
}

const HTML_START = /^\s*<(!doctype html|html[\s>])/i;

function isAbort(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'AbortError';
}

/** The body size the server announced, when it counts the bytes we will read. */
export function announcedSize(headers: Headers): number | null {
  // With Content-Encoding the length counts compressed bytes, and the body arrives decompressed.
  if (headers.get('content-encoding')) return null;
  const text = headers.get('content-length');
  if (text === null || !/^\d+$/.test(text)) return null;
  return Number(text);
}

/** True when bytes that should be a model file are an HTML page. */
export function looksLikeHtml(bytes: Uint8Array): boolean {
  return HTML_START.test(new TextDecoder().decode(bytes.subarray(0, 64)));
}

export async function downloadFile(url: string, options: DownloadOptions): Promise<ArrayBuffer> {
  const { file, signal } = options;
  const fetchImpl = options.fetchImpl ?? fetch;
  if (signal?.aborted) throw new DownloadCancelledError(file);
  let res: Response;
  try {
    res = await fetchImpl(url, { signal, credentials: 'omit' });
  } catch (err) {
    if (isAbort(err) || signal?.aborted) throw new DownloadCancelledError(file);
    throw new Error(`${file}: could not reach ${url} (${(err as Error).message}): offline, blocked by the browser (CORS), or a wrong endpoint`);
  }
  if (res.status === 404) throw new MissingFileError(file, `HTTP 404 at ${url}`);
  if (!res.ok) throw new HubHttpError(file, res.status, url);
  if ((res.headers.get('content-type') ?? '').includes('text/html')) {
    await res.body?.cancel().catch(() => {});
    throw new MissingFileError(file, `the server sent an HTML page instead of the file at ${url}`);
  }
  const total = announcedSize(res.headers);
  options.onStart?.(total);
  const bytes = await readBody(res, file, total, signal, options.onBytes);
  if (looksLikeHtml(bytes)) throw new MissingFileError(file, `the server sent an HTML page instead of the file at ${url}`);
  return bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : bytes.slice().buffer;
}

async function readBody(
  res: Response,
  file: string,
  total: number | null,
  signal: AbortSignal | undefined,
  onBytes: ((bytes: number) => void) | undefined,
): Promise<Uint8Array> {
  if (!res.body) {
    const whole = new Uint8Array(await res.arrayBuffer());
    onBytes?.(whole.byteLength);
    return whole;
  }
  const reader = res.body.getReader();
  // With a known size the bytes go straight into one buffer (no second copy of a large file).
  let out = total !== null ? new Uint8Array(total) : null;
  const chunks: Uint8Array[] = [];
  let loaded = 0;
  try {
    for (;;) {
      if (signal?.aborted) throw new DownloadCancelledError(file);
      const { done, value } = await reader.read();
      if (done) break;
      if (out && loaded + value.byteLength <= out.byteLength) out.set(value, loaded);
      else {
        // More bytes than announced: fall back to collecting chunks.
        if (out) chunks.push(out.subarray(0, loaded));
        out = null;
        chunks.push(value);
      }
      loaded += value.byteLength;
      onBytes?.(value.byteLength);
    }
  } catch (err) {
    await reader.cancel().catch(() => {});
    if (err instanceof DownloadCancelledError) throw err;
    if (isAbort(err) || signal?.aborted) throw new DownloadCancelledError(file);
    throw new Error(`${file}: the download broke off after ${loaded} bytes (${(err as Error).message})`);
  }
  if (out) {
    if (loaded !== out.byteLength) throw new Error(`${file}: the server announced ${out.byteLength} bytes but sent ${loaded}`);
    return out;
  }
  const joined = new Uint8Array(loaded);
  let at = 0;
  for (const c of chunks) {
    joined.set(c, at);
    at += c.byteLength;
  }
  return joined;
}
