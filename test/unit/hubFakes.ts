// Test doubles for the Hub loading tests in Node: a fetch that serves test/fixtures/hub (the
// Hub's URL layout) from disk and counts requests, and an in-memory Cache API.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ModelFiles } from '../../src/model/load';

export const HUB_FIXTURES = fileURLToPath(new URL('../fixtures/hub/', import.meta.url));
export const FIXTURE_ENDPOINT = 'https://hub.test';

export interface GoldenFixture {
  id: string;
  dtype: string;
  prompt: string;
  prompt_ids: number[];
  vocab_size: number;
  rows_from: number;
  logits: number[][];
}

export function goldenFixtures(): GoldenFixture[] {
  return JSON.parse(readFileSync(join(HUB_FIXTURES, 'golden.json'), 'utf8')).fixtures;
}

export function fixtureDir(id: string): string {
  return join(HUB_FIXTURES, id, 'resolve', 'main');
}

export interface FakeServer {
  fetch: typeof fetch;
  /** URLs requested so far. */
  requests: string[];
}

/**
 * Serves `${FIXTURE_ENDPOINT}/<owner>/<name>/resolve/<rev>/<file>` from the fixture folder.
 * `missing: 'html'` answers unknown files like a single-page-app dev server (index.html, 200);
 * `status` forces a status for every request; `chunk` splits bodies into chunks of that size;
 * `drop` hides files, `replace` serves other contents for files (both by file name).
 */
export function fakeHub(
  options: { missing?: '404' | 'html'; status?: number; chunk?: number; drop?: string[]; replace?: Record<string, string> } = {},
): FakeServer {
  const requests: string[] = [];
  const fetchImpl = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = String(input);
    requests.push(url);
    if (init?.signal?.aborted) throw new DOMException('The operation was aborted.', 'AbortError');
    if (options.status) return new Response('{"error":"nope"}', { status: options.status, headers: { 'content-type': 'application/json' } });
    const path = decodeURIComponent(url.slice(FIXTURE_ENDPOINT.length + 1));
    const file = join(HUB_FIXTURES, path);
    const name = path.split('/').pop()!;
    const exists = options.replace?.[name] !== undefined || (!options.drop?.includes(name) && safeIsFile(file));
    if (!exists) {
      return options.missing === 'html'
        ? new Response('<!doctype html><html><body>app</body></html>', { status: 200, headers: { 'content-type': 'text/html' } })
        : new Response('Entry not found', { status: 404 });
    }
    const bytes = options.replace?.[name] !== undefined ? new TextEncoder().encode(options.replace[name]) : new Uint8Array(readFileSync(file));
    const chunk = options.chunk ?? bytes.byteLength;
    let at = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (init?.signal?.aborted) {
          controller.error(new DOMException('The operation was aborted.', 'AbortError'));
          return;
        }
        if (at >= bytes.byteLength) {
          controller.close();
          return;
        }
        controller.enqueue(bytes.slice(at, at + chunk));
        at += chunk;
      },
    });
    return new Response(body, { status: 200, headers: { 'content-length': String(bytes.byteLength), 'content-type': 'application/octet-stream' } });
  };
  return { fetch: fetchImpl as typeof fetch, requests };
}

function safeIsFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A fixture folder as picked files (webkitRelativePath "<name>/<file>", as a folder pick gives). */
export function pickedFiles(id: string, options: { drop?: string[]; folder?: string } = {}): File[] {
  const dir = fixtureDir(id);
  const folder = options.folder ?? id.split('/')[1];
  return readdirSync(dir)
    .filter((f) => !options.drop?.includes(f))
    .map((f) => {
      const file = new File([readFileSync(join(dir, f))], f);
      Object.defineProperty(file, 'webkitRelativePath', { value: `${folder}/${f}` });
      return file;
    });
}

interface Stored {
  body: ArrayBuffer;
  headers: [string, string][];
}

/** An in-memory Cache API (the slice the model cache uses), with an optional byte quota. */
export class MemoryCacheStorage {
  readonly stores = new Map<string, Map<string, Stored>>();
  constructor(private readonly quotaBytes = Infinity) {}

  used(): number {
    let n = 0;
    for (const s of this.stores.values()) for (const e of s.values()) n += e.body.byteLength;
    return n;
  }

  async open(name: string): Promise<Cache> {
    let store = this.stores.get(name);
    if (!store) this.stores.set(name, (store = new Map()));
    const entries = store;
    const quota = () => this.quotaBytes - this.used();
    const urlOf = (r: RequestInfo | URL) => (typeof r === 'string' ? r : r instanceof URL ? r.href : r.url);
    const cache = {
      async match(request: RequestInfo | URL) {
        const e = entries.get(urlOf(request));
        return e ? new Response(e.body.byteLength ? e.body.slice(0) : null, { headers: e.headers }) : undefined;
      },
      async put(request: RequestInfo | URL, response: Response) {
        const body = await response.arrayBuffer();
        if (body.byteLength > quota()) throw new DOMException('Quota exceeded.', 'QuotaExceededError');
        entries.set(urlOf(request), { body, headers: [...response.headers.entries()] });
      },
      async keys() {
        return [...entries.keys()].map((u) => new Request(u));
      },
      async delete(request: RequestInfo | URL) {
        return entries.delete(urlOf(request));
      },
    };
    return cache as unknown as Cache;
  }
}

/**
 * ModelFiles with every ArrayBuffer as a Uint8Array: vitest's toEqual treats two ArrayBuffers of
 * the same length as equal whatever their bytes, typed arrays it compares element by element.
 */
export function comparable(files: ModelFiles & { hub?: unknown }) {
  const { weights, hub: _hub, ...rest } = files;
  return {
    ...rest,
    weights:
      'shards' in weights
        ? { index: weights.index, shards: weights.shards.map((s) => ({ file: s.file, bytes: new Uint8Array(s.buffer) })) }
        : new Uint8Array(weights),
  };
}
