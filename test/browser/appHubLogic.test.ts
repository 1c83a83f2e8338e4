// The pure logic behind the app's real-model features, in Node: model ids by source and the
// Hub field's live check, the ?hub_endpoint address parameter, picked files as a "local:" model,
// download progress folded for the panel, the LoRA settings in the catalogue, and the zip of
// an exported adapter.
import { strFromU8, unzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import type { DownloadProgress } from '../../src/model/hub/progress';
import { GRPO_DEFAULTS } from '../../src/rl/config';
import { FIRST_VISIT } from '../../src/share/presets';
import { formatDuration, summarize, type DownloadSummary } from '../../src/ui/lib/downloadView';
import { readHubEndpoint } from '../../src/ui/lib/hubEndpoint';
import { pickedFilesProblem, pickedModelId } from '../../src/ui/lib/localPick';
import { describeHubModel, HUB_SUGGESTIONS, hubIdFromInput, hubIdProblem, hubInputFromId, modelSourceOf } from '../../src/ui/lib/modelChoice';
import { exportZipName, zipModelFiles } from '../../src/ui/lib/modelZip';
import { ALL_OPTIONS, modulesFromText, modulesToText, SETTING_GROUPS, trlNote } from '../../src/ui/lib/settingsCatalog';
import { validateExperiment } from '../../src/ui/lib/validate';

describe('model ids in the picker', () => {
  it('tells the four sources apart', () => {
    expect(modelSourceOf('embedded/tiny-gpt2-byte')).toBe('embedded');
    expect(modelSourceOf('hf:Qwen/Qwen3-0.6B')).toBe('hub');
    expect(modelSourceOf('local:my-model')).toBe('local');
    expect(modelSourceOf('/test/fixtures/tiny-byte-gpt2/')).toBe('served');
  });

  it('suggests valid Hub ids only', () => {
    expect(HUB_SUGGESTIONS.map((s) => s.id)).toContain('hf:HuggingFaceTB/SmolLM2-135M-Instruct');
    for (const s of HUB_SUGGESTIONS) expect(hubIdProblem(s.id), s.id).toBeNull();
  });

  it('turns the Hub field text into an id and back, with or without the prefix', () => {
    expect(hubIdFromInput('  Qwen/Qwen3-0.6B ')).toBe('hf:Qwen/Qwen3-0.6B');
    expect(hubIdFromInput('hf:owner/name@v1')).toBe('hf:owner/name@v1');
    expect(hubInputFromId('hf:owner/name@v1')).toBe('owner/name@v1');
    expect(hubInputFromId('embedded/tiny-gpt2-byte')).toBe('');
  });

  it('names what is wrong with a typed Hub id, and validation blocks Train with it', () => {
    expect(hubIdProblem('hf:gpt2')).toMatch(/has no owner: write owner\/name/);
    expect(hubIdProblem('hf:')).toMatch(/empty/);
    expect(hubIdProblem('hf:a/b c')).toMatch(/whitespace/);
    expect(hubIdProblem('embedded/tiny-gpt2-byte')).toBeNull();
    const v = validateExperiment({ ...FIRST_VISIT.experiment, model: 'hf:gpt2' } as unknown as Record<string, unknown>);
    expect(v.experiment).toBeNull();
    expect(v.issues).toEqual([{ area: 'model', path: '', label: 'Model', message: expect.stringMatching(/has no owner/) }]);
    expect(validateExperiment({ ...FIRST_VISIT.experiment, model: 'hf:openai-community/gpt2' } as unknown as Record<string, unknown>).issues).toEqual([]);
  });

  it('says where a Hub model downloads from, and at which revision', () => {
    expect(describeHubModel('hf:owner/name', null)).toMatch(/^owner\/name: downloaded once from huggingface\.co/);
    expect(describeHubModel('hf:owner/name@v2', '/mirror')).toMatch(/^owner\/name at revision v2: downloaded once from \/mirror/);
  });
});

describe('the hub_endpoint address parameter', () => {
  it('accepts a path of this server or an http(s) URL, without a trailing slash', () => {
    expect(readHubEndpoint('?hub_endpoint=/test/fixtures/hub/')).toEqual({ endpoint: '/test/fixtures/hub', error: null });
    expect(readHubEndpoint('?x=1&hub_endpoint=https%3A%2F%2Fmirror.example')).toEqual({ endpoint: 'https://mirror.example', error: null });
    expect(readHubEndpoint('')).toEqual({ endpoint: null, error: null });
  });

  it('refuses anything else with the reason, falling back to huggingface.co', () => {
    const r = readHubEndpoint('?hub_endpoint=javascript:alert(1)');
    expect(r.endpoint).toBeNull();
    expect(r.error).toMatch(/hub_endpoint was ignored: .*must use http or https, not javascript:/);
    expect(readHubEndpoint('?hub_endpoint=mirror').error).toMatch(/neither an http\(s\) URL nor a path/);
    expect(readHubEndpoint('?hub_endpoint=/a/../b').error).toMatch(/may not contain "\.\."/);
  });
});

describe('picked files as a local model', () => {
  const file = (name: string, path = '', size = 10) => ({ name, size, webkitRelativePath: path });

  it('names the model after the folder, or after the weights of loose files', () => {
    expect(pickedModelId([file('config.json', 'my gpt2/config.json'), file('model.safetensors', 'my gpt2/model.safetensors')])).toBe('local:my gpt2');
    expect(pickedModelId([file('config.json'), file('model-00001-of-00002.safetensors')])).toBe('local:model');
    expect(pickedModelId([file('config.json'), file('weird<name>.safetensors')])).toBe('local:weird_name_');
  });

  it('names what a pick lacks', () => {
    expect(pickedFilesProblem([file('config.json'), file('model.safetensors')])).toBeNull();
    expect(pickedFilesProblem([file('tokenizer.json')])).toMatch(/have no config\.json and no a \.safetensors weights file/);
    expect(pickedFilesProblem([file('config.json')])).toMatch(/\(config\.json\) have no a \.safetensors weights file/);
    expect(pickedFilesProblem([])).toMatch(/^no files were picked/);
  });
});

describe('download progress for the panel', () => {
  const event = (file: string, loaded: number, total: number | null, o: Partial<DownloadProgress> & { overallLoaded: number; overallTotal: number | null; filesDone: number }): DownloadProgress => ({
    file,
    loaded,
    total,
    fromCache: o.fromCache ?? false,
    done: o.done ?? false,
    bytesPerSecond: o.bytesPerSecond ?? 0,
    etaSeconds: null,
    overall: { loaded: o.overallLoaded, total: o.overallTotal, filesDone: o.filesDone, filesKnown: 3, etaSeconds: o.overallTotal === null ? null : 5 },
  });

  it('folds events into percent, current file and which finished files came from the cache', () => {
    let s: DownloadSummary | null = null;
    s = summarize(s, event('config.json', 100, 100, { fromCache: true, done: true, overallLoaded: 100, overallTotal: null, filesDone: 1 }));
    expect(s.percent).toBeNull();
    expect(s.cachedFiles).toEqual(['config.json']);
    s = summarize(s, event('model.safetensors', 400, 800, { bytesPerSecond: 2048, overallLoaded: 500, overallTotal: 1000, filesDone: 1 }));
    expect(s).toMatchObject({ file: 'model.safetensors', fileFromCache: false, percent: 50, bytesPerSecond: 2048, etaSeconds: 5 });
    s = summarize(s, event('model.safetensors', 800, 800, { done: true, overallLoaded: 900, overallTotal: 1000, filesDone: 2 }));
    // A repeated "done" for the same file is counted once.
    s = summarize(s, event('model.safetensors', 800, 800, { done: true, overallLoaded: 900, overallTotal: 1000, filesDone: 2 }));
    expect(s.downloadedFiles).toEqual(['model.safetensors']);
    expect(s.percent).toBe(90);
  });

  it('writes durations a person reads', () => {
    expect(formatDuration(null)).toBe('unknown');
    expect(formatDuration(9.6)).toBe('10 s');
    expect(formatDuration(185)).toBe('3 min 05 s');
    expect(formatDuration(3725)).toBe('1 h 02 min');
  });
});

describe('LoRA settings', () => {
  const lora = SETTING_GROUPS.find((g) => g.id === 'lora')!;

  it('has every TRL ModelConfig LoRA option, with its PEFT name and default in the tooltip', () => {
    expect(lora.options.map((o) => o.key)).toEqual(['use_peft', 'lora_r', 'lora_alpha', 'lora_dropout', 'lora_target_modules', 'use_rslora']);
    for (const o of lora.options) expect(o.key in GRPO_DEFAULTS, o.key).toBe(true);
    expect(trlNote(ALL_OPTIONS.find((o) => o.key === 'lora_r')!)).toBe('TRL: lora_r · PEFT: r · default 16');
    expect(trlNote(ALL_OPTIONS.find((o) => o.key === 'lora_target_modules')!)).toMatch(/PEFT: target_modules · default PEFT's default for the architecture/);
  });

  it('shows the adapter options only once use_peft is on', () => {
    const rank = lora.options.find((o) => o.key === 'lora_r')!;
    expect(rank.when!({ ...GRPO_DEFAULTS })).toBe(false);
    expect(rank.when!({ ...GRPO_DEFAULTS, use_peft: true })).toBe(true);
  });

  it('reads target modules as a list, "all-linear" or the default, and the config accepts each', () => {
    expect(modulesFromText(' q_proj, v_proj  o_proj ')).toEqual(['q_proj', 'v_proj', 'o_proj']);
    expect(modulesFromText('all-linear')).toBe('all-linear');
    expect(modulesFromText('  ')).toBeUndefined();
    expect(modulesToText(['c_attn', 'c_fc'])).toBe('c_attn, c_fc');
    expect(modulesToText(null)).toBe('');
    for (const value of [['q_proj', 'v_proj'], 'all-linear']) {
      const exp = { ...FIRST_VISIT.experiment, config: { ...FIRST_VISIT.experiment.config, use_peft: true, lora_target_modules: value } };
      expect(validateExperiment(exp as unknown as Record<string, unknown>).issues, String(value)).toEqual([]);
    }
  });
});

describe('model export zip', () => {
  it('holds each exported file, weights stored, JSON readable', () => {
    const weights = new Uint8Array([1, 2, 3, 4, 250]).buffer;
    const zip = zipModelFiles({ 'adapter_model.safetensors': weights, 'adapter_config.json': '{"peft_type": "LORA"}' });
    const files = unzipSync(zip);
    expect(Object.keys(files).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors']);
    expect([...files['adapter_model.safetensors']]).toEqual([1, 2, 3, 4, 250]);
    expect(JSON.parse(strFromU8(files['adapter_config.json'])).peft_type).toBe('LORA');
    expect(() => zipModelFiles({})).toThrow('the export has no files');
  });

  it('names the zip after the run', () => {
    expect(exportZipName('Run 2025-01-02 10:30', 'adapter')).toBe('Run-2025-01-02-10-30-adapter.zip');
    expect(exportZipName('///', 'model')).toBe('run-model.zip');
  });
});
