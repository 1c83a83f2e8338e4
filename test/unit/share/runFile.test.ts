// Run files: JSON and zip round trips (checkpoint included, non-finite metrics kept), and clear
// errors for files that are not run files, newer, tampered with, malformed or oversized.
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { writeSafetensors } from '../../../src/model/safetensors';
import type { RolloutRecord, StepMetrics } from '../../../src/rl/grpoStep';
import type { RewardMetrics } from '../../../src/rl/metrics';
import { parseRubric, rubricVersion } from '../../../src/rubric';
import { FIRST_VISIT } from '../../../src/share/presets';
import { readRunFile, runFileJson, runFileName, runFileZip, RunFileError, type RunFile, type RunFileInput } from '../../../src/share/runFile';

function rewards(pass: number): RewardMetrics {
  return {
    reward: 0.5 + pass / 10,
    reward_std: 0.25,
    criterion_pass_rate: { short: pass / 4, asks: null },
    criterion_mean_score: { short: pass / 4, asks: null },
    strict_completion_rate: 0.125,
    unscorable: 1,
    aggregations: { weighted_mean: 0.5, strict_all_required: null },
  };
}

function metrics(step: number, over: Partial<StepMetrics> = {}): StepMetrics {
  return {
    step,
    rewards: rewards(step),
    held_out: step % 2 ? rewards(1) : null,
    completions: { mean_length: 12.5, min_length: 3, max_length: 48, clipped_ratio: 0.25 },
    frac_reward_zero_std: 0.5,
    loss: 0.01 * step,
    policy_loss: -0.02,
    kl: null,
    entropy: 2.5,
    clip_ratio_low: 0,
    clip_ratio_high: 0.01,
    clip_ratio_region: 0.01,
    ratio_mean: 1,
    grad_norm: 0.7,
    learning_rate: 3e-4,
    skipped: false,
    sampling_tokens_per_second: 1234.5,
    training_tokens_per_second: 987.25,
    judge_seconds: 0.01,
    step_seconds: 1.5,
    update_submits: 1,
    ...over,
  };
}

function rollout(step: number, index: number): RolloutRecord {
  return {
    step,
    group: 0,
    index,
    prompt: 'Describe the sea.',
    completion: index ? '<script>alert(1)</script> caf\u00e9 \ud83c\udf0a' : 'The sea?',
    completion_ids: [1, 2, 3],
    logprobs: [-0.5, -1.25, -Infinity],
    truncated: index === 1,
    results: [
      { criterion_id: 'short', status: 'ok', score: 1, reason: '3 words' },
      { criterion_id: 'asks', status: 'unscorable', score: null, reason: 'judge failed' },
    ],
    scores: [1, null, 0, 0],
    reward: index ? null : 0.75,
    advantage: index ? 0 : 1.5,
  };
}

function checkpoint() {
  const weights = writeSafetensors({ 'wte.weight': { shape: [2, 3], data: Float32Array.from([1, 2, 3, 4, 5, 6]) } });
  const optimizer = writeSafetensors({ 'exp_avg.wte.weight': { shape: [6], data: new Float32Array(6).fill(0.5) } });
  return {
    step: 2,
    files: {
      'config.json': JSON.stringify({ model_type: 'gpt2', n_embd: 3 }),
      'model.safetensors': weights,
      'optimizer.safetensors': optimizer,
      'trainer_state.json': JSON.stringify({ format: 'rubric-playground-checkpoint-1', global_step: 2, seed: 42 }),
    },
  };
}

function run(over: Partial<RunFileInput> = {}): RunFileInput {
  return {
    name: 'My run: "sea" ✓',
    exported_at: '2025-01-02T03:04:05.000Z',
    experiment: structuredClone(FIRST_VISIT.experiment),
    metrics: [metrics(0), metrics(1, { loss: NaN, grad_norm: Infinity, skipped: true }), metrics(2, { kl: 0.003 })],
    rollouts: [rollout(0, 0), rollout(0, 1), rollout(1, 0)],
    ...over,
  };
}

async function failure(data: string | Uint8Array): Promise<RunFileError> {
  try {
    await readRunFile(data);
  } catch (e) {
    expect(e).toBeInstanceOf(RunFileError);
    return e as RunFileError;
  }
  throw new Error('reading did not fail');
}

const bytesOf = (b: ArrayBuffer) => Array.from(new Uint8Array(b));

describe('round trips', () => {
  it('JSON: everything comes back, NaN and Infinity included, with the rubric version filled in', async () => {
    const input = run({ checkpoint: checkpoint() });
    const text = await runFileJson(input);
    expect(text).toContain('"loss":"NaN"');
    const back = await readRunFile(text);
    expect(back.metrics).toEqual(input.metrics);
    expect(Number.isNaN(back.metrics[1].loss)).toBe(true);
    expect(back.metrics[1].grad_norm).toBe(Infinity);
    expect(back.rollouts).toEqual(input.rollouts);
    expect(back.rollouts[0].logprobs[2]).toBe(-Infinity);
    expect(back.experiment).toEqual(input.experiment);
    expect(back.name).toBe(input.name);
    expect(back.exported_at).toBe(input.exported_at);
    expect(back.rubric_versions).toEqual([{ version: await rubricVersion(parseRubric(input.experiment.rubric)), rubric: input.experiment.rubric, first_step: 0 }]);
    expect(back.checkpoint!.step).toBe(2);
    expect(bytesOf(back.checkpoint!.files['model.safetensors'])).toEqual(bytesOf(input.checkpoint!.files['model.safetensors']));
    expect(bytesOf(back.checkpoint!.files['optimizer.safetensors']!)).toEqual(bytesOf(input.checkpoint!.files['optimizer.safetensors']!));
    expect(back.checkpoint!.files['trainer_state.json']).toBe(input.checkpoint!.files['trainer_state.json']);
    // The same text as bytes or an ArrayBuffer (a File read by the page).
    expect(await readRunFile(strToU8(text))).toEqual(back);
    expect(await readRunFile(strToU8(text).buffer as ArrayBuffer)).toEqual(back);
  });

  it('zip: run.json plus the checkpoint as entries (a loadable Hugging Face folder)', async () => {
    const input = run({ checkpoint: checkpoint() });
    const zip = await runFileZip(input);
    const entries = unzipSync(zip);
    expect(Object.keys(entries).sort()).toEqual(['checkpoint/config.json', 'checkpoint/model.safetensors', 'checkpoint/optimizer.safetensors', 'checkpoint/trainer_state.json', 'run.json']);
    expect(JSON.parse(strFromU8(entries['run.json'])).checkpoint.files['model.safetensors']).toEqual({ zip_entry: 'checkpoint/model.safetensors' });
    const back = await readRunFile(zip);
    expect(back).toEqual(await readRunFile(await runFileJson(input)));
  });

  it('a LoRA checkpoint keeps its PEFT adapter files, in JSON and as zip entries', async () => {
    const c = checkpoint();
    const adapter = writeSafetensors({ 'base_model.model.transformer.h.0.attn.c_attn.lora_A.weight': { shape: [2, 3], data: new Float32Array(6).fill(0.25) } });
    const input = run({ checkpoint: { ...c, files: { ...c.files, 'adapter_model.safetensors': adapter, 'adapter_config.json': JSON.stringify({ peft_type: 'LORA', r: 2 }) } } });
    const back = await readRunFile(await runFileJson(input));
    expect(bytesOf(back.checkpoint!.files['adapter_model.safetensors']!)).toEqual(bytesOf(adapter));
    expect(back.checkpoint!.files['adapter_config.json']).toBe(input.checkpoint!.files['adapter_config.json']);
    const entries = unzipSync(await runFileZip(input));
    expect(Object.keys(entries)).toEqual(expect.arrayContaining(['checkpoint/adapter_model.safetensors', 'checkpoint/adapter_config.json']));
    expect(await readRunFile(await runFileZip(input))).toEqual(back);
  });

  it('a sync_ref_model checkpoint keeps its drifted reference, in JSON and as a zip entry', async () => {
    const c = checkpoint();
    const ref = writeSafetensors({ 'transformer.wte.weight': { shape: [2, 2], data: Float32Array.from([0.5, -1, 2, 0.125]) } });
    const input = run({ checkpoint: { ...c, files: { ...c.files, 'ref_model.safetensors': ref } } });
    const back = await readRunFile(await runFileJson(input));
    expect(bytesOf(back.checkpoint!.files['ref_model.safetensors']!)).toEqual(bytesOf(ref));
    const entries = unzipSync(await runFileZip(input));
    expect(Object.keys(entries)).toContain('checkpoint/ref_model.safetensors');
    expect(await readRunFile(await runFileZip(input))).toEqual(back);
  });

  it('a run without a checkpoint, with two rubric versions', async () => {
    const v1 = structuredClone(FIRST_VISIT.experiment.rubric) as { name: string; criteria: { weight: number }[] };
    v1.criteria[0].weight = 3;
    const input = run({ rubric_versions: [{ rubric: v1, first_step: 0 }, { rubric: FIRST_VISIT.experiment.rubric, first_step: 2 }] });
    const back: RunFile = await readRunFile(await runFileZip(input));
    expect(back.checkpoint).toBeUndefined();
    expect(back.rubric_versions.map((r) => r.first_step)).toEqual([0, 2]);
    expect(back.rubric_versions[0].version).not.toBe(back.rubric_versions[1].version);
  });

  it('file names are safe', () => {
    expect(runFileName('My run: "sea" ✓', 'zip')).toBe('my-run-sea.rubric-run.zip');
    expect(runFileName('../../etc/passwd', 'json')).toBe('etc-passwd.rubric-run.json');
    expect(runFileName('☃', 'json')).toBe('run.rubric-run.json');
  });
});

describe('bad files', () => {
  it('not a run file, or a newer one', async () => {
    expect((await failure('hello')).message).toMatch(/not a run file: the content is not JSON/);
    expect((await failure('[1]')).message).toMatch(/not a JSON object/);
    expect((await failure('{"format": "something-else"}')).message).toMatch(/not a Rubric Playground run file \(format is "something-else"/);
    const text = await runFileJson(run());
    expect((await failure(text.replace('"version":1', '"version":2'))).message).toMatch(/made by a newer version of Rubric Playground \(format 2/);
    expect((await failure(text.replace('"version":1', '"version":0'))).message).toMatch(/not a positive integer/);
    expect((await failure(new Uint8Array([0xff, 0xfe, 0x00]))).message).toMatch(/neither a zip nor UTF-8 JSON/);
  });

  it('a tampered rubric no longer matches its version', async () => {
    const text = await runFileJson(run());
    const doc = JSON.parse(text);
    doc.rubric_versions[0].rubric.criteria[0].weight = 5;
    expect((await failure(JSON.stringify(doc))).message).toMatch(/rubric_versions\[0\]: its version [0-9a-f]{12}… does not match its rubric .* edited or damaged/);
    doc.rubric_versions[0].rubric.criteria[0].weight = 0;
    doc.rubric_versions[0].rubric.criteria[1].weight = 0;
    doc.rubric_versions[0].rubric.criteria[2].weight = 0;
    expect((await failure(JSON.stringify(doc))).message).toMatch(/rubric_versions\[0\] is not a valid rubric:\nRubric criteria: total positive weight/);
  });

  it("the experiment's rubric must be one of the versions", async () => {
    const other = structuredClone(FIRST_VISIT.experiment.rubric) as { name: string };
    other.name = 'other';
    const text = await runFileJson(run({ rubric_versions: [{ rubric: other, first_step: 0 }] }));
    expect((await failure(text)).message).toMatch(/experiment's rubric is not among rubric_versions/);
  });

  it('malformed metrics and rollouts name the field', async () => {
    const doc = JSON.parse(await runFileJson(run()));
    doc.metrics[1].loss = 'lots';
    doc.rollouts[2].weights = [1];
    const message = (await failure(JSON.stringify(doc))).message;
    expect(message).toMatch(/the run file is invalid:/);
    expect(message).toMatch(/metrics\[1\]\.loss: /);
    expect(message).toMatch(/rollouts\[2\]: unknown field\(s\) weights/);
  });

  it('an invalid experiment and prototype keys are refused', async () => {
    const doc = JSON.parse(await runFileJson(run()));
    doc.experiment.config.num_generations = 1;
    // In the page's words, as a link's experiment.
    expect((await failure(JSON.stringify(doc))).message).toMatch(/experiment is invalid:\nSetting num_generations: must be at least 2, got 1$/);
    const text = await runFileJson(run());
    expect((await failure(text.replace('"metrics":[', '"__proto__":{"x":1},"metrics":['))).message).toMatch(/the key "__proto__" is not allowed in a run file/);
  });

  it('a step or a rollout repeated (the page keys them) is refused, naming it', async () => {
    const doc = JSON.parse(await runFileJson(run()));
    const rollouts = structuredClone(doc);
    rollouts.rollouts.push({ ...rollouts.rollouts[1], completion: 'again' });
    expect((await failure(JSON.stringify(rollouts))).message).toMatch(/rollouts: step \d+, group 0, index 1 appears twice/);
    const metrics = structuredClone(doc);
    metrics.metrics.push(metrics.metrics[0]);
    expect((await failure(JSON.stringify(metrics))).message).toMatch(/metrics: step 0 appears twice/);
  });

  it('a damaged checkpoint is refused', async () => {
    const doc = JSON.parse(await runFileJson(run({ checkpoint: checkpoint() })));
    const good = structuredClone(doc);
    doc.checkpoint.files['model.safetensors'] = { base64: 'AAAAAAAAAAB7fQ==' }; // header length 0 then "{}"
    expect((await failure(JSON.stringify(doc))).message).toMatch(/checkpoint model\.safetensors is not a valid safetensors file: its header is not JSON/);
    doc.checkpoint.files['model.safetensors'] = { base64: 'not base64!' };
    expect((await failure(JSON.stringify(doc))).message).toMatch(/checkpoint model\.safetensors: bad base64/);
    const state = structuredClone(good);
    state.checkpoint.files['trainer_state.json'] = '{"seed": 1}';
    expect((await failure(JSON.stringify(state))).message).toMatch(/trainer_state\.json has no non-negative integer global_step/);
    const truncated = structuredClone(good);
    const bytes = Buffer.from(truncated.checkpoint.files['model.safetensors'].base64, 'base64');
    truncated.checkpoint.files['model.safetensors'] = { base64: bytes.subarray(0, bytes.length - 4).toString('base64') };
    expect((await failure(JSON.stringify(truncated))).message).toMatch(/data_offsets \[0,24\] outside the file/);
  });

  it('zips: no run.json, a missing entry, an entry declaring a huge size', async () => {
    expect((await failure(zipSync({ 'other.txt': strToU8('x') }))).message).toMatch(/the zip has no run\.json/);
    const zip = await runFileZip(run({ checkpoint: checkpoint() }));
    const entries = unzipSync(zip);
    delete entries['checkpoint/model.safetensors'];
    expect((await failure(zipSync(entries))).message).toMatch(/checkpoint model\.safetensors: the zip has no entry checkpoint\/model\.safetensors/);
    // Patch run.json's uncompressed size in the central directory to 300 MB: refused before inflating.
    const patched = zip.slice();
    const view = new DataView(patched.buffer);
    for (let i = patched.length - 22; i >= 0; i--) {
      if (view.getUint32(i, true) !== 0x02014b50) continue;
      const nameLength = view.getUint16(i + 28, true);
      if (strFromU8(patched.subarray(i + 46, i + 46 + nameLength)) === 'run.json') view.setUint32(i + 24, 300 * 1024 * 1024, true);
    }
    expect((await failure(patched)).message).toMatch(/zip entry run\.json is 314572800 bytes, above the limit/);
    expect((await failure(zip.slice(0, 100))).message).toMatch(/the zip file is damaged/);
  });
});
