// Share links are read in a worker so a link of megabytes never freezes the page. With a fake
// worker (it answers with the real worker's linkDecodeReply): the page gets the same experiment
// and the same refusals (code and words) as decodeShareLink gives; a link that takes longer than
// the bound is stopped with a clear message and its worker terminated; the newest link wins; and
// only where workers cannot run is the link read on the main thread.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodeShareLink, encodeShareLink, ShareLinkError } from '../../../src/share/link';
import { LinkDecoder, type WorkerLike } from '../../../src/share/linkDecoder';
import { linkDecodeReply, type LinkDecodeRequest } from '../../../src/share/linkReply';
import { FIRST_VISIT } from '../../../src/share/presets';

const VALID = encodeShareLink({ experiment: FIRST_VISIT.experiment, preset: FIRST_VISIT.id });

/** A worker that starts ('ready') and answers each request a tick later, unless `silent`. */
class FakeWorker implements WorkerLike {
  onmessage: ((event: MessageEvent) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  posted: LinkDecodeRequest[] = [];
  terminated = false;
  constructor(private readonly mode: 'answer' | 'silent' | 'fail-to-start' | 'crash' = 'answer') {
    setTimeout(() => {
      if (this.terminated) return;
      if (mode === 'fail-to-start') this.onerror?.({ message: 'module script failed', preventDefault() {} } as ErrorEvent);
      else this.onmessage?.({ data: { ready: true } } as MessageEvent);
    }, 0);
  }
  postMessage(message: unknown): void {
    const request = message as LinkDecodeRequest;
    this.posted.push(request);
    if (this.mode === 'answer') {
      setTimeout(() => !this.terminated && this.onmessage?.({ data: structuredClone(linkDecodeReply(request)) } as MessageEvent), 1);
    } else if (this.mode === 'crash') {
      setTimeout(() => !this.terminated && this.onerror?.({ message: 'Out of memory', preventDefault() {} } as ErrorEvent), 5);
    }
  }
  terminate(): void {
    this.terminated = true;
  }
}

/** The rejection of `p` (fails the test if it resolves). */
async function refusal(p: Promise<unknown>): Promise<ShareLinkError> {
  const outcome = await p.then(
    (v) => ({ ok: true as const, v }),
    (e: unknown) => ({ ok: false as const, e }),
  );
  if (outcome.ok) throw new Error(`expected a refusal, got ${JSON.stringify(outcome.v)?.slice(0, 100)}`);
  return outcome.e as ShareLinkError;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('LinkDecoder', () => {
  it('reads a link in the worker (not here) and gets the same experiment decodeShareLink gives', async () => {
    const workers: FakeWorker[] = [];
    const decoder = new LinkDecoder(() => {
      const w = new FakeWorker();
      workers.push(w);
      return w;
    });
    const shared = await decoder.decode(VALID);
    expect(shared).toEqual(decodeShareLink(VALID));
    expect(workers).toHaveLength(1);
    expect(workers[0].posted.map((r) => r.fragment)).toEqual([VALID]);
    // The worker is kept for the next link.
    await decoder.decode(VALID);
    expect(workers).toHaveLength(1);
    decoder.dispose();
    expect(workers[0].terminated).toBe(true);
  });

  it('passes on the refusals with their code and words', async () => {
    const workers: FakeWorker[] = [];
    const decoder = new LinkDecoder(() => {
      const w = new FakeWorker();
      workers.push(w);
      return w;
    });
    for (const bad of ['#x=2.AAAA', '#x=1.this*is!not~base64', `#x=1.${'A'.repeat(200_000)}`, '#y=3']) {
      const expected = (() => {
        try {
          decodeShareLink(bad);
        } catch (e) {
          return e as ShareLinkError;
        }
        throw new Error(`${bad} decodes`);
      })();
      const e = await refusal(decoder.decode(bad));
      expect(e).toBeInstanceOf(ShareLinkError);
      expect({ code: e.code, message: e.message }).toEqual({ code: expected.code, message: expected.message });
    }
    // Text over the length limit is refused without being copied to the worker; the rest went there.
    expect(workers.flatMap((w) => w.posted.map((r) => r.fragment))).toEqual(['#x=2.AAAA', '#x=1.this*is!not~base64', '#y=3']);
    decoder.dispose();
  });

  it('stops a link that takes longer than the bound, saying so, and starts a fresh worker for the next', async () => {
    vi.useFakeTimers();
    const workers: FakeWorker[] = [];
    const decoder = new LinkDecoder(() => {
      const w = new FakeWorker(workers.length === 0 ? 'silent' : 'answer');
      workers.push(w);
      return w;
    }, 8000);
    const slow = refusal(decoder.decode(VALID));
    await vi.advanceTimersByTimeAsync(7999);
    expect(workers[0].terminated).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const e = await slow;
    expect(e.code).toBe('too_slow');
    expect(e.message).toBe('reading the link took over 8 s and was stopped: it is damaged or far too large for a link (export a run file instead)');
    expect(workers[0].terminated).toBe(true);
    const next = decoder.decode(VALID);
    await vi.advanceTimersByTimeAsync(10);
    expect(await next).toEqual(decodeShareLink(VALID));
    expect(workers).toHaveLength(2);
  });

  it('the newest link wins: an older one still being read resolves null and its worker stops', async () => {
    const workers: FakeWorker[] = [];
    const decoder = new LinkDecoder(() => {
      const w = new FakeWorker(workers.length === 0 ? 'silent' : 'answer');
      workers.push(w);
      return w;
    });
    const old = decoder.decode(VALID);
    const bad = refusal(decoder.decode('#x=2.AAAA'));
    expect(await old).toBeNull();
    expect(workers[0].terminated).toBe(true);
    expect((await bad).code).toBe('newer_version');
    decoder.dispose();
  });

  it('a worker that dies on a link refuses that link; it is never read on the main thread after', async () => {
    const decoder = new LinkDecoder(() => new FakeWorker('crash'));
    const e = await refusal(decoder.decode(VALID));
    expect(e.code).toBe('too_large');
    expect(e.message).toMatch(/^the link could not be read: its reader stopped \(Out of memory\)/);
  });

  it('reads on the main thread only where no worker can start', async () => {
    const none = new LinkDecoder(() => null);
    expect(await none.decode(VALID)).toEqual(decodeShareLink(VALID));
    expect((await refusal(none.decode('#x=2.AAAA'))).code).toBe('newer_version');
    // A worker whose module cannot load: the pending link is read here, and later ones too.
    let spawned = 0;
    const broken = new LinkDecoder(() => (spawned++, new FakeWorker('fail-to-start')));
    expect(await broken.decode(VALID)).toEqual(decodeShareLink(VALID));
    expect(await broken.decode(VALID)).toEqual(decodeShareLink(VALID));
    expect(spawned).toBe(1);
  });
});
