// Lesson recordings: the index the page reads (bad or missing ones offer no replay, never an
// error), URLs relative to the page under a sub-path, scripts/recordings.mjs converting the run
// files lessons.mjs --record writes into zips readRunFile reads, whether a recording still
// matches its lesson, and every recording shipped in public/recordings/.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RolloutRecord, StepMetrics } from '../../../src/rl/grpoStep';
import { lessonById } from '../../../src/share/lessons';
import { offlineManifest } from '../../../scripts/vite/offlinePlugin';
import { routeRequest } from '../../../src/offline/policy';
import { expectedShape, fetchRecording, fetchRecordingIndex, parseRecordingIndex, recordedWithLessonSettings, recordingFor, recordingLabel, recordingUrl, type RecordingEntry } from '../../../src/share/recordings';
import { readRunFile, runFileJson } from '../../../src/share/runFile';

const ROOT = join(__dirname, '..', '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'recordings.mjs');
const LESSON = lessonById('grpo-basics')!;

function metrics(step: number): StepMetrics {
  const rewards = { reward: 0.25 + step / 10, reward_std: 0.2, criterion_pass_rate: { short: 0.5 }, criterion_mean_score: { short: 0.5 }, strict_completion_rate: 0.25, unscorable: 0, aggregations: {} };
  return {
    step,
    rewards,
    held_out: null,
    completions: { mean_length: 12, min_length: 3, max_length: 40, clipped_ratio: 0 },
    frac_reward_zero_std: 0.5,
    loss: 0.01,
    policy_loss: -0.02,
    kl: null,
    entropy: 2.5,
    clip_ratio_low: 0,
    clip_ratio_high: 0,
    clip_ratio_region: 0,
    ratio_mean: 1,
    grad_norm: 0.7,
    learning_rate: 3e-4,
    skipped: false,
    sampling_tokens_per_second: 100,
    training_tokens_per_second: 100,
    judge_seconds: 0.01,
    step_seconds: 1.5,
    update_submits: 1,
  } as StepMetrics;
}

function rollout(step: number, index: number): RolloutRecord {
  return {
    step,
    group: 0,
    index,
    prompt: 'Describe the sea.',
    completion: '<b>The sea.</b>',
    completion_ids: [1, 2],
    logprobs: [-0.5, -1],
    truncated: false,
    results: [{ criterion_id: 'short', status: 'ok', score: 1, reason: '2 words' }],
    scores: [1],
    reward: 1,
    advantage: 0.5,
  };
}

/** A run file as lessons.mjs --record writes it: the lesson's experiment with its seed, `steps` steps. */
async function recordedRunFile(seed: number, steps: number, change: Record<string, unknown> = {}): Promise<string> {
  const experiment = structuredClone(LESSON.shared.experiment) as Record<string, unknown>;
  experiment.config = { ...(experiment.config as object), seed, ...change };
  const list = Array.from({ length: steps }, (_, i) => i);
  return runFileJson({
    name: `${LESSON.id} (recording, seed ${seed})`,
    experiment: experiment as never,
    metrics: list.map(metrics),
    rollouts: list.flatMap((s) => [rollout(s, 0), rollout(s, 1)]),
  });
}

const entry = (over: Partial<RecordingEntry> = {}): RecordingEntry => ({
  lesson: 'grpo-basics',
  file: 'grpo-basics.rubric-run.zip',
  seed: 3,
  steps: 5,
  model: 'embedded/tiny-gpt2-byte',
  recorded_at: '2026-12-01T21:50:37.402Z',
  adapter: 'Google SwiftShader',
  bytes: 1000,
  ...over,
});
const indexText = (recordings: unknown[]) => JSON.stringify({ format: 'rubric-playground-recordings', version: 1, recordings });

/** A fetch that serves the files of a folder at https://host/sub/ (404 elsewhere). */
function folderFetch(dir: string) {
  return async (url: string) => {
    const path = new URL(url).pathname;
    const file = path.startsWith('/sub/') ? join(dir, path.slice('/sub/'.length)) : '';
    const ok = file !== '' && existsSync(file);
    const bytes = ok ? readFileSync(file) : Buffer.from('');
    return { ok, status: ok ? 200 : 404, text: async () => bytes.toString('utf8'), arrayBuffer: async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer };
  };
}

function convert(from: string, to: string, ...extra: string[]): string {
  return execFileSync(process.execPath, [SCRIPT, '--from', from, '--to', to, ...extra], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('the recordings index', () => {
  it('lists recordings by lesson', () => {
    const index = parseRecordingIndex(indexText([entry(), entry({ lesson: 'clipping', file: 'clipping.rubric-run.zip', seed: 1 })]));
    expect(recordingFor(index, 'clipping')?.seed).toBe(1);
    expect(recordingFor(index, 'grpo-basics')?.steps).toBe(5);
    expect(recordingFor(index, 'zero-variance')).toBeNull();
  });

  it('a missing, malformed or foreign index offers no recording (no error)', () => {
    expect(parseRecordingIndex('<!doctype html><html>')).toEqual([]);
    expect(parseRecordingIndex(JSON.stringify({ format: 'something-else', version: 1, recordings: [entry()] }))).toEqual([]);
    expect(parseRecordingIndex(indexText([entry({ file: '../secrets.rubric-run.zip' })]))).toEqual([]);
    expect(parseRecordingIndex(indexText([entry({ file: 'https://evil.example/x.rubric-run.zip' })]))).toEqual([]);
  });

  it('URLs are relative to the page, so a sub-path deploy finds them', () => {
    expect(recordingUrl('https://host/sub/index.html#lesson=1', 'grpo-basics.rubric-run.zip')).toBe('https://host/sub/recordings/grpo-basics.rubric-run.zip');
    expect(recordingUrl('https://host/sub/', 'a.rubric-run.zip')).toBe('https://host/sub/recordings/a.rubric-run.zip');
    expect(recordingLabel(3)).toBe('recording (seed 3)');
  });

  it('the offline page caches them at install, and the service worker answers them from its cache', () => {
    const manifest = offlineManifest([
      { name: 'index.html', content: '<html>' },
      { name: 'recordings/index.json', content: indexText([entry()]) },
      { name: 'recordings/grpo-basics.rubric-run.zip', content: new Uint8Array([80, 75]) },
    ]);
    expect(manifest.shell).toContain('recordings/index.json');
    const get = (file: string) => routeRequest({ url: recordingUrl('https://host/sub/', file), method: 'GET', mode: 'cors' }, 'https://host/sub/', manifest);
    expect(get('grpo-basics.rubric-run.zip')).toBe('shell');
    expect(routeRequest({ url: 'https://host/sub/recordings/index.json', method: 'GET', mode: 'cors' }, 'https://host/sub/', manifest)).toBe('shell');
  });

  it('what you should see: the recording\'s first and last mean reward', () => {
    const m = (step: number, reward: number | null) => ({ step, rewards: { reward } });
    expect(expectedShape([m(4, 0.375), m(0, 0.2125), m(2, 0.5)])).toBe("the recording's mean reward went from 0.21 at step 0 to 0.38 at step 4");
    expect(expectedShape([m(0, 0.5)])).toBe("the recording's mean reward was 0.50 at step 0");
    expect(expectedShape([m(0, null), m(1, 0.5)])).toBeNull();
    expect(expectedShape([])).toBeNull();
  });

  it('a listed recording that is missing, broken or never arrives is said plainly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rec-missing-'));
    await expect(fetchRecording('https://host/sub/', entry(), folderFetch(dir))).rejects.toThrow('the recording of this lesson could not be downloaded (HTTP 404)');
    const junk = async () => ({ ok: true, status: 200, text: async () => '', arrayBuffer: async () => new TextEncoder().encode('{"format":"nope"}').buffer as ArrayBuffer });
    await expect(fetchRecording('https://host/sub/', entry(), junk)).rejects.toThrow(/^the recording of this lesson is not a valid run file: /);
    const never = () => new Promise<never>(() => {});
    await expect(fetchRecording('https://host/sub/', entry(), never, 50)).rejects.toThrow('the recording of this lesson did not arrive within 0 s; reload the page to try again');
  });

  it('fetching an index that is not there, or failing, gives none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rec-none-'));
    await expect(fetchRecordingIndex('https://host/sub/', folderFetch(dir))).resolves.toEqual([]);
    await expect(fetchRecordingIndex('https://host/sub/', () => Promise.reject(new Error('offline')))).resolves.toEqual([]);
  });
});

describe('scripts/recordings.mjs', () => {
  it('converts recorded run files into zips the page reads, with an index', async () => {
    const from = mkdtempSync(join(tmpdir(), 'rec-from-'));
    const site = mkdtempSync(join(tmpdir(), 'rec-site-'));
    const to = join(site, 'recordings');
    const json = await recordedRunFile(3, 4);
    writeFileSync(join(from, 'grpo-basics.rubric-run.json'), json);
    writeFileSync(join(from, 'results.json'), JSON.stringify({ adapter: 'Google SwiftShader (fallback adapter)' }));
    expect(convert(from, to, '--results', join(from, 'results.json'))).toContain('grpo-basics.rubric-run.zip: 4 steps, seed 3');

    const fetcher = folderFetch(site);
    const index = await fetchRecordingIndex('https://host/sub/index.html', fetcher);
    expect(index).toHaveLength(1);
    expect(index[0]).toMatchObject({ lesson: 'grpo-basics', seed: 3, steps: 4, adapter: 'Google SwiftShader (fallback adapter)', model: LESSON.shared.experiment.model });
    const zip = readFileSync(join(to, index[0].file));
    expect(index[0].bytes).toBe(zip.length);
    expect(zip.length).toBeLessThan(Buffer.byteLength(json) / 2);
    const run = await fetchRecording('https://host/sub/index.html', index[0], fetcher);
    expect(run.metrics.map((m) => m.step)).toEqual([0, 1, 2, 3]);
    expect(run.rollouts).toHaveLength(8);
    expect(run.rollouts[0].completion).toBe('<b>The sea.</b>');
    expect(recordedWithLessonSettings(run.experiment, LESSON.shared.experiment)).toBe(true);

    // A second conversion (another lesson) keeps the first listed.
    const from2 = mkdtempSync(join(tmpdir(), 'rec-from2-'));
    writeFileSync(join(from2, 'clipping.rubric-run.json'), await recordedRunFile(1, 2));
    convert(from2, to, '--adapter', 'Other GPU');
    const both = parseRecordingIndex(readFileSync(join(to, 'index.json'), 'utf8'));
    expect(both.map((e) => `${e.lesson}:${e.adapter}`)).toEqual(['clipping:Other GPU', 'grpo-basics:Google SwiftShader (fallback adapter)']);
  });

  it('refuses a run file with a checkpoint, without steps, or without an adapter, naming the problem', async () => {
    const from = mkdtempSync(join(tmpdir(), 'rec-bad-'));
    const to = mkdtempSync(join(tmpdir(), 'rec-bad-out-'));
    writeFileSync(join(from, 'grpo-basics.rubric-run.json'), await recordedRunFile(3, 1));
    expect(() => convert(from, to)).toThrow(/adapter the recordings were made on is unknown/);
    const doc = JSON.parse(await recordedRunFile(3, 1));
    writeFileSync(join(from, 'grpo-basics.rubric-run.json'), JSON.stringify({ ...doc, checkpoint: { step: 1, files: {} } }));
    expect(() => convert(from, to, '--adapter', 'x')).toThrow(/grpo-basics.rubric-run.json: holds a checkpoint/);
    writeFileSync(join(from, 'grpo-basics.rubric-run.json'), JSON.stringify({ ...doc, metrics: [] }));
    expect(() => convert(from, to, '--adapter', 'x')).toThrow(/has no steps/);
    expect(existsSync(join(to, 'index.json'))).toBe(false);
  });

  it('a recording whose lesson settings changed since is told apart (the seed and max_steps aside)', async () => {
    const same = await readRunFile(await recordedRunFile(9, 1, { max_steps: 5 }));
    expect(recordedWithLessonSettings(same.experiment, LESSON.shared.experiment)).toBe(true);
    const changed = await readRunFile(await recordedRunFile(9, 1, { learning_rate: 0.123 }));
    expect(recordedWithLessonSettings(changed.experiment, LESSON.shared.experiment)).toBe(false);
    expect(recordedWithLessonSettings(same.experiment, { model: 'x' })).toBe(false);
  });
});

describe('the recordings shipped in public/recordings', () => {
  const dir = join(ROOT, 'public', 'recordings');
  const index = existsSync(join(dir, 'index.json')) ? parseRecordingIndex(readFileSync(join(dir, 'index.json'), 'utf8')) : [];

  it('there is at least one, each of a known lesson, small', () => {
    expect(index.length).toBeGreaterThan(0);
    for (const e of index) {
      expect(lessonById(e.lesson), e.lesson).toBeDefined();
      expect(e.bytes, e.file).toBeLessThan(1024 * 1024);
    }
  });

  it('each reads as a run file matching its index entry', async () => {
    for (const e of index) {
      const run = await readRunFile(readFileSync(join(dir, e.file)));
      expect(run.metrics.length, e.file).toBe(e.steps);
      expect(run.experiment.config?.seed, e.file).toBe(e.seed);
      expect(run.rollouts.length, e.file).toBeGreaterThan(0);
      expect(run.checkpoint, e.file).toBeUndefined();
    }
  });
});
