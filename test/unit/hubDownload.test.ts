import { describe, expect, it } from 'vitest';
import { announcedSize, downloadFile, looksLikeHtml } from '../../src/model/hub/download';
import { DownloadCancelledError, HubHttpError, MissingFileError } from '../../src/model/hub/errors';
import { FIXTURE_ENDPOINT, fakeHub } from './hubFakes';

const CONFIG_URL = `${FIXTURE_ENDPOINT}/rubric-fixtures/tiny-gpt2/resolve/main/config.json`;
const WEIGHTS_URL = `${FIXTURE_ENDPOINT}/rubric-fixtures/tiny-gpt2/resolve/main/model.safetensors`;

describe('downloadFile', () => {
  it('streams a file, reporting its size and every chunk', async () => {
    const hub = fakeHub({ chunk: 1000 });
    let total: number | null = -1;
    const chunks: number[] = [];
    const bytes = await downloadFile(WEIGHTS_URL, { file: 'model.safetensors', fetchImpl: hub.fetch, onStart: (t) => (total = t), onBytes: (n) => chunks.push(n) });
    expect(total).toBe(bytes.byteLength);
    expect(chunks.length).toBe(Math.ceil(bytes.byteLength / 1000));
    expect(chunks.reduce((a, b) => a + b, 0)).toBe(bytes.byteLength);
    expect(new DataView(bytes).getBigUint64(0, true)).toBeGreaterThan(0n); // a safetensors header length
  });

  it('names the file and the status: 404 is missing, 401/403 say gated or private, others say what to do', async () => {
    await expect(downloadFile(`${FIXTURE_ENDPOINT}/a/b/resolve/main/config.json`, { file: 'config.json', fetchImpl: fakeHub().fetch })).rejects.toThrow(
      new MissingFileError('config.json', `HTTP 404 at ${FIXTURE_ENDPOINT}/a/b/resolve/main/config.json`),
    );
    for (const status of [401, 403]) {
      const err = await downloadFile(CONFIG_URL, { file: 'config.json', fetchImpl: fakeHub({ status }).fetch }).catch((e) => e);
      expect(err).toBeInstanceOf(HubHttpError);
      expect(err.message).toMatch(new RegExp(`^config.json: HTTP ${status} from .*gated or private.*does not send access tokens`));
    }
    await expect(downloadFile(CONFIG_URL, { file: 'config.json', fetchImpl: fakeHub({ status: 503 }).fetch })).rejects.toThrow(/HTTP 503 .*try again later/);
    await expect(downloadFile(CONFIG_URL, { file: 'config.json', fetchImpl: fakeHub({ status: 429 }).fetch })).rejects.toThrow(/too many requests/);
  });

  it('detects an HTML page served in place of a file (by content type, and by its first bytes)', async () => {
    await expect(
      downloadFile(`${FIXTURE_ENDPOINT}/a/b/resolve/main/model.safetensors`, { file: 'model.safetensors', fetchImpl: fakeHub({ missing: 'html' }).fetch }),
    ).rejects.toThrow(/model.safetensors is missing: the server sent an HTML page instead/);
    const htmlAsBytes = (async () =>
      new Response('\n <!DOCTYPE html><html></html>', { headers: { 'content-type': 'application/octet-stream' } })) as unknown as typeof fetch;
    await expect(downloadFile(CONFIG_URL, { file: 'config.json', fetchImpl: htmlAsBytes })).rejects.toBeInstanceOf(MissingFileError);
    expect(looksLikeHtml(new TextEncoder().encode('<html lang="en">'))).toBe(true);
    expect(looksLikeHtml(new TextEncoder().encode('{"model_type": "gpt2"}'))).toBe(false);
  });

  it('cancels before the request and in the middle of the body, with "download cancelled"', async () => {
    const before = new AbortController();
    before.abort();
    const hub = fakeHub();
    await expect(downloadFile(WEIGHTS_URL, { file: 'model.safetensors', fetchImpl: hub.fetch, signal: before.signal })).rejects.toThrow(
      new DownloadCancelledError('model.safetensors'),
    );
    expect(hub.requests).toHaveLength(0);
    const during = new AbortController();
    let received = 0;
    const err = await downloadFile(WEIGHTS_URL, {
      file: 'model.safetensors',
      fetchImpl: fakeHub({ chunk: 4096 }).fetch,
      signal: during.signal,
      onBytes: (n) => {
        received += n;
        if (received >= 8192) during.abort();
      },
    }).catch((e) => e);
    expect(err).toBeInstanceOf(DownloadCancelledError);
    expect(err.message).toBe('download cancelled (while fetching model.safetensors)');
    expect(received).toBe(8192);
  });

  it('explains network failures and short bodies', async () => {
    const offline = (async () => {
      throw new TypeError('Failed to fetch');
    }) as unknown as typeof fetch;
    await expect(downloadFile(CONFIG_URL, { file: 'config.json', fetchImpl: offline })).rejects.toThrow(/config.json: could not reach .*Failed to fetch.*offline/);
    const short = (async () => new Response('{}', { headers: { 'content-length': '10' } })) as unknown as typeof fetch;
    await expect(downloadFile(CONFIG_URL, { file: 'config.json', fetchImpl: short })).rejects.toThrow(/announced 10 bytes but sent 2/);
  });

  it('ignores Content-Length when the body is compressed', () => {
    expect(announcedSize(new Headers({ 'content-length': '42' }))).toBe(42);
    expect(announcedSize(new Headers({ 'content-length': '42', 'content-encoding': 'gzip' }))).toBeNull();
    expect(announcedSize(new Headers({ 'content-length': 'x' }))).toBeNull();
  });
});
