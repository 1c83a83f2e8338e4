// Page side of test/browser/appHubParts.test.ts: the memory check's debounce, newest-wins and
// blocking rules with a scripted estimator, and the download panel mounted on progress states
// that a fast local download passes too quickly to see (a file read from the cache mid-way,
// a total not known yet).
import { flushSync, mount, unmount } from 'svelte';
import type { DownloadProgress } from '../../../src/model/hub/progress';
import type { MemoryPlan } from '../../../src/rl/memoryPlan';
import { summarize } from '../../../src/ui/lib/downloadView';
import { MemoryCheck, type EstimateRequest } from '../../../src/ui/lib/memoryCheck.svelte';
import { TrainingSession } from '../../../src/ui/lib/session.svelte';
import DownloadPanel from '../../../src/ui/run/DownloadPanel.svelte';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function plan(total: number, fits: boolean): MemoryPlan {
  const parts = { weights: total, gradients: 0, optimizer: 0, modelBuffers: 0, referenceModel: 0, activations: 0, kvCache: 0, sampling: 0, logits: 0, passes: 0 };
  return {
    estimate: { ...parts, total, totalIfTrimmed: total, largest: { label: 'logits', bytes: total, allocated: total } },
    fit: fits ? { fits: true, message: null } : { fits: false, message: `needs ${total} bytes` },
    budgetBytes: 1000,
    limits: { maxBufferSize: 1000, maxStorageBufferBindingSize: 1000 },
    promptTokens: 8,
  };
}

/** What each model id makes the scripted estimator do. */
const SCRIPT: Record<string, { ms: number; total?: number; fits?: boolean; throws?: { name: string; message: string } }> = {
  a: { ms: 0, total: 1 },
  b: { ms: 0, total: 2 },
  c: { ms: 0, total: 3, fits: true },
  slow: { ms: 150, total: 10 },
  fast: { ms: 0, total: 20 },
  big: { ms: 0, total: 5000, fits: false },
  context: { ms: 0, throws: { name: 'RangeError', message: "prompts exceed this model's context" } },
  offline: { ms: 0, throws: { name: 'Error', message: 'config.json could not be fetched' } },
};

const request = (model: string): EstimateRequest => ({ experiment: { model } });

export async function memoryCheckRules(): Promise<Record<string, unknown>> {
  const calls: string[] = [];
  const check = new MemoryCheck(async (r) => {
    const model = String(r.experiment.model);
    calls.push(model);
    const s = SCRIPT[model];
    await sleep(s.ms);
    if (s.throws) throw Object.assign(new Error(s.throws.message), { name: s.throws.name });
    return plan(s.total!, s.fits ?? true);
  }, 20);
  const settle = () => sleep(80);
  const out: Record<string, unknown> = {};

  // Typing: three edits inside the delay make one estimate, of the last.
  check.schedule(request('a'), 'a');
  check.schedule(request('b'), 'b');
  check.schedule(request('c'), 'c');
  out.waitingState = check.state;
  await settle();
  out.debounced = { calls: [...calls], total: check.reply?.estimate.total, current: check.isCurrent('c'), staleForB: check.isCurrent('b') };

  // The same experiment again: no new estimate.
  check.schedule(request('c'), 'c');
  await settle();
  out.repeatCalls = calls.length;

  // A slow estimate overtaken by a newer one: the newer reply stays.
  calls.length = 0;
  check.schedule(request('slow'), 'slow');
  await sleep(40);
  check.schedule(request('fast'), 'fast');
  await sleep(250);
  out.newestWins = { calls: [...calls], total: check.reply?.estimate.total, current: check.isCurrent('fast') };

  // Does not fit: blocks that experiment only.
  check.schedule(request('big'), 'big');
  await settle();
  out.big = { blocker: check.blocker('big'), otherKey: check.blocker('fast') };

  // Refused for the model's context (RangeError, as Comlink carries it): blocks.
  check.schedule(request('context'), 'context');
  await settle();
  out.context = { state: check.state, error: check.error, blocker: check.blocker('context') };

  // Could not estimate at all: says so, blocks nothing.
  check.schedule(request('offline'), 'offline');
  await settle();
  out.offline = { state: check.state, error: check.error, blocker: check.blocker('offline') };

  // Nothing to estimate (the experiment has problems).
  check.schedule(null, 'broken');
  out.idle = { state: check.state, reply: check.reply, blocker: check.blocker('broken') };
  check.dispose();
  return out;
}

function progress(file: string, o: { loaded: number; total: number | null; fromCache: boolean; done: boolean; overallLoaded: number; overallTotal: number | null; filesDone: number; filesKnown: number }): DownloadProgress {
  return {
    file,
    loaded: o.loaded,
    total: o.total,
    fromCache: o.fromCache,
    done: o.done,
    bytesPerSecond: 2 * 1024 * 1024,
    etaSeconds: 3,
    overall: { loaded: o.overallLoaded, total: o.overallTotal, filesDone: o.filesDone, filesKnown: o.filesKnown, etaSeconds: o.overallTotal === null ? null : 90 },
  };
}

/** Mounts the download panel and reads it at each of a sequence of progress states. */
export async function downloadPanelStates(): Promise<Record<string, unknown>> {
  const session = new TrainingSession();
  const target = document.createElement('div');
  document.body.append(target);
  const app = mount(DownloadPanel, { target, props: { session } });
  const read = () => {
    const bar = target.querySelector('[role="progressbar"]');
    return {
      shown: target.querySelector('[data-testid="download"]') !== null,
      heading: target.querySelector('h2')?.textContent?.trim() ?? null,
      valuenow: bar?.getAttribute('aria-valuenow') ?? null,
      valuetext: bar?.getAttribute('aria-valuetext') ?? null,
      amount: target.querySelector('[data-testid="download-amount"]')?.textContent?.replace(/\s+/g, ' ').trim() ?? null,
      file: target.querySelector('[data-testid="download-file"]')?.textContent?.replace(/\s+/g, ' ').trim() ?? null,
      fromCache: target.querySelector('[data-testid="download-from-cache"]') !== null,
      cancel: target.querySelector('[data-testid="download-cancel"]') !== null,
      summary: target.querySelector('[data-testid="download-summary"]')?.textContent?.replace(/\s+/g, ' ').trim() ?? null,
    };
  };
  const states: Record<string, unknown> = { before: (flushSync(), read()) };
  const MiB = 1024 * 1024;
  session.download = summarize(null, progress('config.json', { loaded: 700, total: 700, fromCache: true, done: true, overallLoaded: 700, overallTotal: null, filesDone: 1, filesKnown: 4 }));
  session.downloadStatus = 'active';
  flushSync();
  states.totalUnknown = read();
  session.download = summarize(session.download, progress('tokenizer.json', { loaded: 2000, total: 4000, fromCache: true, done: false, overallLoaded: 2700, overallTotal: null, filesDone: 1, filesKnown: 4 }));
  flushSync();
  states.fromCache = read();
  session.download = summarize(session.download, progress('model.safetensors', { loaded: 50 * MiB, total: 200 * MiB, fromCache: false, done: false, overallLoaded: 50 * MiB, overallTotal: 200 * MiB, filesDone: 3, filesKnown: 4 }));
  flushSync();
  states.downloading = read();
  session.download = summarize(session.download, progress('model.safetensors', { loaded: 200 * MiB, total: 200 * MiB, fromCache: false, done: true, overallLoaded: 200 * MiB, overallTotal: 200 * MiB, filesDone: 4, filesKnown: 4 }));
  session.downloadStatus = 'done';
  flushSync();
  states.done = read();
  unmount(app);
  target.remove();
  session.dispose();
  return states;
}
