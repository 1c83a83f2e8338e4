import { describe, expect, it } from 'vitest';
import { EMIT_INTERVAL_SECONDS, ProgressTracker, type DownloadProgress } from '../../src/model/hub/progress';

function clock() {
  let t = 100;
  return { now: () => t, tick: (s: number) => (t += s) };
}

describe('download progress', () => {
  it('computes speed over the recent window and ETAs per file and overall', () => {
    const c = clock();
    const events: DownloadProgress[] = [];
    const p = new ProgressTracker((e) => events.push(e), c.now);
    p.expect(['a.safetensors', 'b.safetensors']);
    p.begin('a.safetensors', 1000, false);
    expect(events[0]).toMatchObject({ file: 'a.safetensors', loaded: 0, total: 1000, etaSeconds: null, bytesPerSecond: 0 });
    expect(events[0].overall).toMatchObject({ total: null, filesKnown: 2, filesDone: 0 }); // b's size not known yet
    c.tick(1);
    p.advance('a.safetensors', 200);
    const e = events.at(-1)!;
    expect(e.bytesPerSecond).toBeCloseTo(200);
    expect(e.etaSeconds).toBeCloseTo(4); // 800 bytes left at 200 B/s
    expect(e.overall.etaSeconds).toBeNull();
    c.tick(1);
    p.advance('a.safetensors', 800);
    p.end('a.safetensors');
    expect(events.at(-1)).toMatchObject({ done: true, loaded: 1000, etaSeconds: 0 });
    expect(events.at(-1)!.bytesPerSecond).toBeCloseTo(500);
    p.begin('b.safetensors', 1500, false);
    c.tick(1);
    p.advance('b.safetensors', 500);
    const last = events.at(-1)!;
    expect(last.overall).toMatchObject({ loaded: 1500, total: 2500, filesDone: 1, filesKnown: 2 });
    expect(last.bytesPerSecond).toBeCloseTo(1500 / 3); // the 3 s window holds all of it
    expect(last.overall.etaSeconds).toBeCloseTo(1000 / 500);
  });

  it('forgets old speed after the window, so a slow-down shows', () => {
    const c = clock();
    const p = new ProgressTracker(undefined, c.now);
    p.begin('f', 10_000, false);
    for (let i = 0; i < 10; i++) {
      c.tick(1);
      p.advance('f', i < 5 ? 1000 : 100);
    }
    // The last three seconds moved 100 B each.
    expect(p.bytesPerSecond()).toBeCloseTo(100);
    c.tick(10); // stalled: nothing arrives
    expect(p.bytesPerSecond()).toBeLessThan(50);
  });

  it('throttles intermediate events, keeps first and last, counts cache reads apart from speed', () => {
    const c = clock();
    const events: DownloadProgress[] = [];
    const p = new ProgressTracker((e) => events.push(e), c.now);
    p.begin('cached.json', 10, true);
    p.advance('cached.json', 10);
    p.end('cached.json');
    expect(events.at(-1)).toMatchObject({ fromCache: true, done: true, etaSeconds: 0, bytesPerSecond: 0 });
    const before = events.length;
    p.begin('big', 1e6, false);
    for (let i = 0; i < 100; i++) {
      c.tick(EMIT_INTERVAL_SECONDS / 10);
      p.advance('big', 1e4);
    }
    p.end('big');
    const emitted = events.length - before;
    expect(emitted).toBeGreaterThanOrEqual(3);
    expect(emitted).toBeLessThan(20);
    expect(events.at(-1)!.overall).toMatchObject({ loaded: 1e6 + 10, total: 1e6 + 10, filesDone: 2 });
  });

  it('treats a size exceeded (a compressed Content-Length) as unknown', () => {
    const c = clock();
    const p = new ProgressTracker(undefined, c.now);
    p.begin('tokenizer.json', 100, false);
    c.tick(1);
    p.advance('tokenizer.json', 150);
    expect(p.snapshot('tokenizer.json')).toMatchObject({ total: null, etaSeconds: null });
    expect(() => p.advance('other', 1)).toThrow(/other was not begun/);
  });
});
