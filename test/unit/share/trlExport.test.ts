// The TRL export: GRPOConfig arguments read back from train_grpo.py with Python's own parser,
// comments for what TRL lacks, the dataset, the reward wiring for each aggregation, and user text
// that cannot escape its string literals. Python parts skip (with a message) without python3.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, describe, expect, it } from 'vitest';
import { GRPO_DEFAULTS } from '../../../src/rl/config';
import { FIRST_VISIT } from '../../../src/share/presets';
import { exportToTrl, exportToTrlZip, pyString, rubricRewardSpec } from '../../../src/share/trlExport';
import { toPythonRegex } from '../../../src/share/python/pyRegex';

const PYTHON = spawnSync('python3', ['--version'], { encoding: 'utf8' }).status === 0;
if (!PYTHON) console.warn('python3 was not found: the Python parts of the TRL export tests are skipped');
const dir = mkdtempSync(join(tmpdir(), 'trl-export-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** GRPOConfig keyword arguments, MODEL_ID and every call in a script, as Python's ast reads them. */
const READ_SCRIPT = `
import ast, json, sys
tree = ast.parse(open(sys.argv[1], encoding="utf-8").read())
out = {"kwargs": {}, "model_id": None, "calls": []}
for node in ast.walk(tree):
    if isinstance(node, ast.Call):
        out["calls"].append(ast.unparse(node.func))
        if getattr(node.func, "id", None) == "GRPOConfig":
            for kw in node.keywords:
                try:
                    out["kwargs"][kw.arg] = ast.literal_eval(kw.value)
                except ValueError:
                    out["kwargs"][kw.arg] = "<" + ast.unparse(kw.value) + ">"
    if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "MODEL_ID":
        out["model_id"] = ast.literal_eval(node.value)
print(json.dumps(out))
`;

function readScript(text: string): { kwargs: Record<string, unknown>; model_id: string; calls: string[] } {
  const file = join(dir, `script-${Math.random().toString(36).slice(2)}.py`);
  writeFileSync(file, text);
  const out = spawnSync('python3', ['-c', READ_SCRIPT, file], { encoding: 'utf8' });
  expect(out.stderr).toBe('');
  return JSON.parse(out.stdout);
}

const experiment = (config: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ ...structuredClone(FIRST_VISIT.experiment), config, ...extra });

describe('train_grpo.py', () => {
  it.skipIf(!PYTHON)('LoRA runs get a PEFT LoraConfig with the run\'s settings, and Hub ids lose their hf: prefix', async () => {
    const e = experiment({ use_peft: true, lora_r: 8, lora_alpha: 16, lora_dropout: 0, lora_target_modules: ['q_proj', 'v_proj'] }, { model: 'hf:HuggingFaceTB/SmolLM2-135M-Instruct' });
    const { files } = await exportToTrl(e);
    const script = files['train_grpo.py'];
    expect(script).toContain('MODEL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"');
    expect(script).not.toMatch(/not on the Hugging Face Hub/);
    expect(script).toContain('peft_config=peft_config');
    const read = spawnSync('python3', ['-c', `
import ast, json, sys
tree = ast.parse(sys.stdin.read())
for node in ast.walk(tree):
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "LoraConfig":
        print(json.dumps({kw.arg: ast.literal_eval(kw.value) for kw in node.keywords}))
`], { input: script, encoding: 'utf8' });
    expect(read.stderr).toBe('');
    expect(JSON.parse(read.stdout)).toEqual({ task_type: 'CAUSAL_LM', r: 8, lora_alpha: 16, lora_dropout: 0, target_modules: ['q_proj', 'v_proj'], use_rslora: false });
    const full = await exportToTrl(experiment({}));
    expect(full.files['train_grpo.py']).not.toContain('LoraConfig');
  });

  it('writes the four files, the first-visit settings and a note on the embedded model', async () => {
    const { files, notes } = await exportToTrl(FIRST_VISIT.experiment);
    expect(Object.keys(files).sort()).toEqual(['README.md', 'prompts.jsonl', 'rubric_reward.py', 'train_grpo.py']);
    const script = files['train_grpo.py'];
    for (const line of ['num_generations=8,', 'generation_batch_size=32,', 'max_completion_length=48,', 'learning_rate=0.0003,', 'loss_type="dapo",', 'beta=0,', 'seed=42,', 'save_steps=10,', 'epsilon_high=None,', 'scale_rewards="group",']) {
      expect(script).toContain(line);
    }
    expect(script).toContain('MODEL_ID = "embedded/tiny-gpt2-byte"');
    expect(script).toMatch(/not on the Hugging Face Hub/);
    expect(notes.join('\n')).toMatch(/not on the Hugging Face Hub/);
    expect(script).toContain('REWARD_FUNCS = [rubric_reward]');
    expect(files['README.md']).toMatch(/not on the Hugging Face Hub/);
  });

  it.skipIf(!PYTHON)('Python reads back every GRPOConfig argument with our values', async () => {
    const config = {
      num_generations: 4,
      generation_batch_size: 16,
      max_completion_length: 64,
      temperature: 0.7,
      top_p: 0.95,
      top_k: 50,
      loss_type: 'grpo',
      beta: 0.04,
      epsilon: 0.1,
      epsilon_high: 0.28,
      num_iterations: 2,
      scale_rewards: 'batch',
      mask_truncated_completions: true,
      importance_sampling_level: 'sequence',
      top_entropy_quantile: 0.2,
      entropy_coef: 0.01,
      learning_rate: 1e-5,
      weight_decay: 0.1,
      max_grad_norm: null,
      adam_beta1: 0.8,
      adam_beta2: 0.99,
      adam_epsilon: 1e-6,
      lr_scheduler_type: 'cosine',
      warmup_ratio: 0.1,
      max_steps: 500,
      seed: 7,
      save_steps: 0,
    };
    const { files } = await exportToTrl(experiment(config));
    const { kwargs } = readScript(files['train_grpo.py']);
    // max_steps counts generation batches on the page, optimizer steps in TRL: 500 × num_iterations 2.
    const expected: Record<string, unknown> = { ...config, max_steps: 1000, max_grad_norm: 0, output_dir: 'grpo-output', gradient_accumulation_steps: '<GRAD_ACCUM>', logging_steps: 1, report_to: 'none', save_strategy: 'no' };
    delete expected.save_steps;
    for (const [k, v] of Object.entries(expected)) expect(kwargs[k], k).toEqual(v);
    expect(kwargs.per_device_train_batch_size).toBe('<PER_DEVICE_BATCH>');
    expect(files['train_grpo.py']).toContain('GRAD_ACCUM = 1\n');
    // Micro-batches in the page become TRL's gradient accumulation.
    const micro = (await exportToTrl(experiment({ ...config, per_device_train_batch_size: 4 }))).files['train_grpo.py'];
    expect(micro).toContain('PER_DEVICE_BATCH = 4  # per_device_train_batch_size');
    expect(micro).toContain('GRAD_ACCUM = 16 // (PER_DEVICE_BATCH * NUM_PROCESSES)');
    expect(kwargs.reward_weights).toBe('<REWARD_WEIGHTS>');
    expect(Object.keys(kwargs)).not.toContain('save_steps');
    // Options newer TRL added are written only when they differ from TRL's defaults.
    const plain = readScript((await exportToTrl(FIRST_VISIT.experiment)).files['train_grpo.py']).kwargs;
    for (const k of ['importance_sampling_level', 'top_entropy_quantile', 'entropy_coef', 'multi_objective_aggregation']) expect(Object.keys(plain)).not.toContain(k);
  });

  it.skipIf(!PYTHON)('carries the newer TRL loss options (delta, cispo, sapo temperatures, use_bias_correction_kl) as GRPOConfig arguments', async () => {
    const read = async (config: Record<string, unknown>) => readScript((await exportToTrl(experiment(config))).files['train_grpo.py']).kwargs;
    const cispo = await read({ loss_type: 'cispo', epsilon_high: 5, beta: 0.01, use_bias_correction_kl: true });
    expect(cispo).toMatchObject({ loss_type: 'cispo', epsilon_high: 5, beta: 0.01, use_bias_correction_kl: true });
    const sapo = await read({ loss_type: 'sapo', sapo_temperature_pos: 0.8, sapo_temperature_neg: 1.2 });
    expect(sapo).toMatchObject({ loss_type: 'sapo', sapo_temperature_pos: 0.8, sapo_temperature_neg: 1.2 });
    expect(await read({ delta: 4 })).toMatchObject({ delta: 4 });
    // At TRL's defaults they are left out (older TRL releases do not know them).
    const plain = await read({});
    for (const k of ['delta', 'sapo_temperature_pos', 'sapo_temperature_neg', 'use_bias_correction_kl']) expect(Object.keys(plain)).not.toContain(k);
    // The sampler's repetition_penalty and min_p (issue 16): GRPOConfig arguments of the same name.
    expect(await read({ repetition_penalty: 1.2, min_p: 0.05 })).toMatchObject({ repetition_penalty: 1.2, min_p: 0.05 });
    for (const k of ['repetition_penalty', 'min_p']) expect(Object.keys(plain)).not.toContain(k);
    // TR-DPO reference sync: the same three GRPOConfig arguments.
    const trdpo = { sync_ref_model: true, beta: 0.04, ref_model_mixup_alpha: 0.5, ref_model_sync_steps: 64 };
    expect(await read(trdpo)).toMatchObject(trdpo);
    for (const k of ['sync_ref_model', 'ref_model_mixup_alpha', 'ref_model_sync_steps']) expect(Object.keys(plain)).not.toContain(k);
  });

  // steps_per_generation (issue 16): the page's S optimizer steps per generation batch is TRL's
  // steps_per_generation S × GRAD_ACCUM accumulation steps; TRL derives generation_batch_size from it.
  it.skipIf(!PYTHON)('steps_per_generation: TRL\'s accumulation steps, and the same generation batch and optimizer steps', async () => {
    const run = async (config: Record<string, unknown>, processes: number) => {
      const script = (await exportToTrl(experiment(config))).files['train_grpo.py'];
      // The batch block, run as Python with WORLD_SIZE processes (everything before the dataset).
      const block = script.slice(script.indexOf('NUM_PROCESSES ='), script.indexOf('dataset = load_dataset'));
      const out = spawnSync('python3', ['-c', `import os, json\n${block}\nprint(json.dumps([PER_DEVICE_BATCH, GRAD_ACCUM, TRL_STEPS_PER_GENERATION]))`], { encoding: 'utf8', env: { ...process.env, WORLD_SIZE: String(processes) } });
      return { script, kwargs: readScript(script).kwargs, out };
    };
    const base = { num_generations: 4, generation_batch_size: 32, steps_per_generation: 4, num_iterations: 2, max_steps: 10, save_steps: 5 };
    const one = await run({ ...base, per_device_train_batch_size: 2 }, 1);
    expect(one.out.stderr).toBe('');
    // An optimizer step is 32 / 4 = 8 sequences = 4 micro-batches of 2; TRL: 4 × 4 = 16 = 32 / 2.
    expect(JSON.parse(one.out.stdout)).toEqual([2, 4, 16]);
    expect(one.kwargs.steps_per_generation).toBe('<TRL_STEPS_PER_GENERATION>');
    expect(Object.keys(one.kwargs)).not.toContain('generation_batch_size'); // TRL refuses both
    expect(one.script).toMatch(/# generation_batch_size 32: TRL derives it/);
    // max_steps and save_steps: 10 and 5 generation batches of 2 × 4 = 8 optimizer steps.
    expect(one.kwargs.max_steps).toBe(80);
    expect(one.kwargs.save_steps).toBe(40);
    expect(one.script).toMatch(/max_steps=80, .*the page's max_steps 10 count generation batches, each 8 optimizer steps \(num_iterations 2 x steps_per_generation 4\)/);
    // Whole slices per micro-batch on 2 processes: 8 / 2 = 4 per device, 1 accumulation step, TRL's 4.
    const two = await run(base, 2);
    expect(JSON.parse(two.out.stdout)).toEqual([4, 1, 4]);
    // 3 processes cannot split an 8-sequence optimizer step.
    const three = await run(base, 3);
    expect(three.out.stderr).toMatch(/an optimizer step's 8 sequences must be a multiple of the number of processes/);
    // The default keeps generation_batch_size (one optimizer step per batch) and writes no steps_per_generation.
    const plain = readScript((await exportToTrl(experiment({}))).files['train_grpo.py']).kwargs;
    expect(plain.generation_batch_size).toBe(GRPO_DEFAULTS.generation_batch_size);
    expect(Object.keys(plain)).not.toContain('steps_per_generation');
  });

  it('advantage_estimator "rloo" becomes a note: TRL\'s GRPOTrainer has no leave-one-out baseline', async () => {
    const { files, notes } = await exportToTrl(experiment({ advantage_estimator: 'rloo' }));
    expect(files['train_grpo.py']).toMatch(/# advantage_estimator "rloo": TRL's GRPOTrainer has no leave-one-out baseline \(RLOO is its separate RLOOTrainer\)/);
    expect(notes).toContainEqual(expect.stringMatching(/^advantage_estimator "rloo"/));
    expect(files['README.md']).toContain('advantage_estimator "rloo"');
  });

  it('options TRL lacks become comments and notes that say so', async () => {
    const { files, notes } = await exportToTrl(experiment({ kl_estimator: 'k2', dual_clip: 3, advantage_estimator: 'rank', on_nonfinite: 'stop' }));
    const script = files['train_grpo.py'];
    expect(script).toMatch(/# kl_estimator "k2": TRL has no such option; its KL term is always k3/);
    expect(script).toMatch(/# dual_clip 3: TRL has no dual-clip .* not applied/);
    expect(script).toMatch(/# advantage_estimator "rank": TRL has no rank-based advantages/);
    expect(script).toMatch(/# on_nonfinite "stop": TRL has no such option/);
    expect(notes).toHaveLength(5); // the four, and the embedded model
    for (const n of notes) expect(files['README.md']).toContain(n);
  });

  it('wires the held-out rubric as a logged reward of weight 0', async () => {
    const heldOut = { name: 'clean', criteria: [{ id: 'c', text: 'short', weight: 1, tier: 'essential', rule: { kind: 'length', unit: 'words', max: 5 } }] };
    const { files } = await exportToTrl(experiment({}, { held_out_rubric: heldOut }));
    expect(files['train_grpo.py']).toContain('REWARD_FUNCS = [rubric_reward, held_out_reward]');
    expect(files['train_grpo.py']).toContain('REWARD_WEIGHTS = [1.0, 0.0]');
    const spec = await rubricRewardSpec(experiment({}, { held_out_rubric: heldOut }));
    expect(spec.held_out?.aggregation.method).toBe('weighted_mean');
  });

  it('normalize_then_sum: one reward function per criterion', async () => {
    const { files, notes } = await exportToTrl(experiment({ multi_objective_aggregation: 'normalize_then_sum' }));
    expect(files['train_grpo.py']).toContain('REWARD_FUNCS = criterion_reward_funcs()');
    expect(files['train_grpo.py']).toContain('multi_objective_aggregation="normalize_then_sum",');
    expect(notes).not.toContain(expect.stringMatching(/held-out/));
  });

  it.skipIf(!PYTHON)('user text cannot escape its string literals', async () => {
    const model = 'evil"\nimport os; os.system("touch /tmp/pwned")\n#\u2028 """ \' \\ \ud83d\ude00';
    const prompts = ['"""\nos.system("x")', 'caf\u00e9 \ud83c\udf0a \u2028\u2029 \\u0041'];
    const rubric = { name: '"""; import os #', criteria: [{ id: 'a', text: '\n"""\nos.system("y")', weight: 1, tier: 'essential', rule: { kind: 'contains', terms: ['"""', '\\n'] } }] };
    const { files } = await exportToTrl(experiment({}, { model, prompts, rubric }));
    const script = readScript(files['train_grpo.py']);
    expect(script.model_id).toBe(model);
    expect(script.calls.filter((c) => c.includes('system'))).toEqual([]);
    const module = readScript(files['rubric_reward.py']);
    expect(module.calls.filter((c) => c.includes('os.system'))).toEqual([]);
    const file = join(dir, 'evil_reward.py');
    writeFileSync(file, files['rubric_reward.py']);
    const out = spawnSync('python3', ['-c', 'import importlib.util, json, sys\nspec = importlib.util.spec_from_file_location("m", sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\nprint(json.dumps([m.SPEC["reward"]["name"], m.SPEC["reward"]["criteria"][0]["text"]]))', file], { encoding: 'utf8' });
    expect(out.stderr).toBe('');
    expect(JSON.parse(out.stdout)).toEqual([rubric.name, rubric.criteria[0].text]);
    expect(files['prompts.jsonl'].trim().split('\n').map((l) => JSON.parse(l).prompt)).toEqual(prompts);
  });
});

describe('prompts.jsonl and the zip', () => {
  it('one {"prompt"} per line, or chat messages', async () => {
    const plain = (await exportToTrl(FIRST_VISIT.experiment)).files['prompts.jsonl'];
    expect(plain.endsWith('\n')).toBe(true);
    expect(plain.trim().split('\n').map((l) => JSON.parse(l))).toEqual(FIRST_VISIT.experiment.prompts.map((prompt) => ({ prompt })));
    const chat = (await exportToTrl(FIRST_VISIT.experiment, { conversational: true })).files['prompts.jsonl'];
    expect(JSON.parse(chat.split('\n')[0])).toEqual({ prompt: [{ role: 'user', content: FIRST_VISIT.experiment.prompts[0] }] });
  });

  it('zips the files under trl-export/', async () => {
    const files = unzipSync(await exportToTrlZip(FIRST_VISIT.experiment, { modelId: 'HuggingFaceTB/SmolLM2-135M-Instruct' }));
    expect(Object.keys(files).sort()).toEqual(['trl-export/README.md', 'trl-export/prompts.jsonl', 'trl-export/rubric_reward.py', 'trl-export/train_grpo.py']);
    const script = strFromU8(files['trl-export/train_grpo.py']);
    expect(script).toContain('MODEL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"');
    expect(script).not.toMatch(/not on the Hugging Face Hub/);
  });

  it('judge settings: the URL and model may be written, a key never is', async () => {
    const rubric = { name: 'q', criteria: [{ id: 'q', text: 'helpful', weight: 1, tier: 'essential', judge_question: 'Helpful?' }] };
    const { files } = await exportToTrl(experiment({}, { rubric }), { judgeUrl: 'https://api.example.org/v1', judgeModel: 'gpt-x' });
    const spec = await rubricRewardSpec(experiment({}, { rubric }), { judgeUrl: 'https://api.example.org/v1', judgeModel: 'gpt-x' });
    expect(spec.judge).toMatchObject({ url: 'https://api.example.org/v1', model: 'gpt-x', api_key_env: 'RUBRIC_JUDGE_API_KEY' });
    expect(JSON.stringify(spec)).not.toMatch(/"api_key"\s*:/);
    expect(files['README.md']).toMatch(/RUBRIC_JUDGE_API_KEY/);
    await expect(exportToTrl(experiment({}, { rubric: { name: 'bad', criteria: [] } }))).rejects.toThrow(/criteria: needs at least one criterion/);
  });
});

describe('Python literals and regexes', () => {
  it.skipIf(!PYTHON)('pyString round-trips any text through Python', () => {
    const texts = ['', 'plain', '"', '\\', '\n\r\t\0\x07', '\u00e9\u00ff\u0100', '\ud83c\udf0a', '\u2028\u2029\ufeff', '\'"""\'\'\'', '\ud800 lone'];
    const program = `import json\nprint(json.dumps([${texts.map(pyString).join(', ')}]))`;
    const out = spawnSync('python3', ['-c', program], { encoding: 'utf8' });
    expect(out.stderr).toBe('');
    // Python's json.dumps writes the lone surrogate as \\ud800, which JSON.parse reads back.
    expect(JSON.parse(out.stdout)).toEqual(texts);
    for (const t of texts) expect(pyString(t)).toMatch(/^"[\x20-\x7e]*"$/);
  });

  it('translates the syntax Python reads differently', () => {
    expect(toPythonRegex('\\d+$', '')).toEqual({ pattern: '[0-9]+\\Z', flags: '' });
    expect(toPythonRegex('^a$', 'mi')).toEqual({ pattern: '^a$', flags: 'im' });
    expect(toPythonRegex('x{,5}', '').pattern).toBe('x\\{\\u002c5\\u007d');
    expect(toPythonRegex('(?<n>a)(b)', '').pattern).toBe('(?:a)(?:b)');
    expect(toPythonRegex('\\u{1F600}\\x41\\cJ\\0', 'u').pattern).toBe('\\U0001f600A\\u000a\\u0000');
    expect(toPythonRegex('[^\\d\\-z]', '').pattern).toBe('[^\\u002d0-9z]');
    expect(toPythonRegex('[]', '').pattern).toBe('[^\\u0000-\\U0010ffff]');
    expect(toPythonRegex('\\p{Lu}', 'u').pattern).toMatch(/^\[A-Z\\u00c0-\\u00d6/);
    expect(() => toPythonRegex('(a+)+', '')).toThrow(/nested quantifier/);
  });
});
