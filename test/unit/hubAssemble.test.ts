// The Hub path (network, here a fake server over the fixture folder) and the picked-files path
// build the same ModelFiles through assembleModelFiles; shards are checked against their index.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configFromHf } from '../../src/model/config';
import { HfTokenizer } from '../../src/model/hfTokenizer';
import { withEngineTensorNames } from '../../src/model/hub/checkpointNames';
import { fetchHubModelFiles } from '../../src/model/hub/fetchHubModel';
import { localModelFiles } from '../../src/model/hub/localFiles';
import { readModelWeights, type ShardedWeights } from '../../src/model/hub/shards';
import type { ModelFiles } from '../../src/model/load';
import { fromHfTensors } from '../../src/model/weights';
import { comparable, FIXTURE_ENDPOINT, fakeHub, fixtureDir, goldenFixtures, pickedFiles } from './hubFakes';

const SHARDED = 'rubric-fixtures/tiny-smollm-sharded';
const fetchFixture = (id: string, hub = fakeHub()) => fetchHubModelFiles(id, { endpoint: FIXTURE_ENDPOINT, fetch: hub.fetch, cache: false });

/** What loadModel does before the GPU: every tensor the engine needs, by name and shape. */
function engineTensors(files: ModelFiles) {
  const config = configFromHf(files.config);
  return fromHfTensors(config, withEngineTensorNames(config, readModelWeights(files.weights)));
}

describe.each(goldenFixtures())('$id from the Hub layout', (golden) => {
  it('assembles config, tokenizer and weights that the engine accepts, prompt tokenized as golden.json says', async () => {
    const files = await fetchFixture(golden.id);
    expect(files.hub).toMatchObject({ id: golden.id, revision: 'main', endpoint: FIXTURE_ENDPOINT, cache: 'off', cachedBytes: 0 });
    expect(files.hub.networkBytes).toBeGreaterThan(10_000);
    const config = configFromHf(files.config);
    expect(config.vocabSize).toBe(golden.vocab_size);
    const tensors = engineTensors(files);
    expect(tensors.size).toBeGreaterThan(10);
    // The tokenizer through @huggingface/transformers agrees with the independent Python BPE.
    const tok = await HfTokenizer.fromJson(files.tokenizerJson!, files.tokenizerConfig!, config.vocabSize);
    const ids = typeof files.tokenizerConfig!.chat_template === 'string' ? tok.encode(tok.chatPrompt(golden.prompt)) : [tok.bosTokenId!, ...tok.encode(golden.prompt)];
    expect(ids).toEqual(golden.prompt_ids);
  });

  it('gives the same ModelFiles from the picked folder', async () => {
    const fromHub = comparable(await fetchFixture(golden.id));
    const fromDisk = comparable(await localModelFiles(pickedFiles(golden.id)));
    expect(fromDisk).toEqual(fromHub);
    // The comparison sees bytes: another fixture's weights differ.
    const other = goldenFixtures().find((f) => f.id !== golden.id)!.id;
    expect(fromDisk.weights).not.toEqual(comparable(await fetchFixture(other)).weights);
  });
});

describe('sharded checkpoints', () => {
  it('reads all shards named by the index, announcing them to progress up front', async () => {
    const events: { file: string; filesKnown: number }[] = [];
    const files = await fetchHubModelFiles(SHARDED, {
      endpoint: FIXTURE_ENDPOINT,
      fetch: fakeHub().fetch,
      cache: false,
      onProgress: (p) => events.push({ file: p.file, filesKnown: p.overall.filesKnown }),
    });
    const sharded = files.weights as ShardedWeights;
    expect(sharded.shards.map((s) => s.file)).toEqual(['model-00001-of-00003.safetensors', 'model-00002-of-00003.safetensors', 'model-00003-of-00003.safetensors']);
    expect(files.hub.files.map((f) => f.file)).toEqual(['config.json', 'tokenizer.json', 'tokenizer_config.json', 'model.safetensors.index.json', ...sharded.index.files]);
    // config, tokenizer x2, index, then the three shards known at once.
    expect(events.find((e) => e.file === 'model-00001-of-00003.safetensors')!.filesKnown).toBe(7);
    const index = JSON.parse(readFileSync(join(fixtureDir(SHARDED), 'model.safetensors.index.json'), 'utf8'));
    expect(readModelWeights(files.weights).size).toBe(Object.keys(index.weight_map).length);
  });

  it('loads through a dev server that answers missing files with index.html', async () => {
    const files = await fetchFixture(SHARDED, fakeHub({ missing: 'html' }));
    expect((files.weights as ShardedWeights).shards).toHaveLength(3);
  });

  it('names a missing shard', async () => {
    await expect(fetchFixture(SHARDED, fakeHub({ drop: ['model-00002-of-00003.safetensors'] }))).rejects.toThrow(
      /model-00002-of-00003.safetensors is missing: HTTP 404 .*model.safetensors.index.json lists it/,
    );
    await expect(localModelFiles(pickedFiles(SHARDED, { drop: ['model-00003-of-00003.safetensors'] }))).rejects.toThrow(
      /model-00003-of-00003.safetensors is missing: not among the picked files/,
    );
  });

  it('names tensors the index places in a shard that does not hold them', async () => {
    const index = JSON.parse(readFileSync(join(fixtureDir(SHARDED), 'model.safetensors.index.json'), 'utf8'));
    index.weight_map['model.norm.weight'] = 'model-00001-of-00003.safetensors';
    index.weight_map['model.extra.weight'] = 'model-00002-of-00003.safetensors';
    const hub = fakeHub({ replace: { 'model.safetensors.index.json': JSON.stringify(index) } });
    const err = await fetchFixture(SHARDED, hub).then(
      () => new Error('no error'),
      (e: Error) => e,
    );
    expect(err.message).toMatch(/^model.safetensors.index.json does not match the shards: /);
    expect(err.message).toContain('model.extra.weight (not in any shard; the index says model-00002-of-00003.safetensors)');
    expect(err.message).toContain('model.norm.weight (in model-00003-of-00003.safetensors; the index says model-00001-of-00003.safetensors)');
    const unsafe = fakeHub({ replace: { 'model.safetensors.index.json': JSON.stringify({ weight_map: { a: '../x.safetensors' } }) } });
    await expect(fetchFixture(SHARDED, unsafe)).rejects.toThrow(/maps to "..\/x.safetensors", which is not a .safetensors file name/);
  });

  it('says when there are no safetensors weights at all', async () => {
    await expect(fetchFixture(SHARDED, fakeHub({ drop: ['model.safetensors.index.json'] }))).rejects.toThrow(
      /has neither model.safetensors nor model.safetensors.index.json; only safetensors checkpoints load/,
    );
  });
});

describe('checks before the weights download', () => {
  it('rejects an unsupported config.json without fetching any weights, naming the settings', async () => {
    const config = JSON.parse(readFileSync(join(fixtureDir(SHARDED), 'config.json'), 'utf8'));
    const hub = fakeHub({ replace: { 'config.json': JSON.stringify({ ...config, rope_scaling: { rope_type: 'llama3', factor: 32 }, mlp_bias: true }) } });
    await expect(fetchFixture(SHARDED, hub)).rejects.toThrow(
      /hub.test\/rubric-fixtures\/tiny-smollm-sharded \(revision main\): config.json \(model_type "llama"\): unsupported settings: "rope_scaling" .*type "llama3".*; "mlp_bias": true/,
    );
    expect(hub.requests.map((u) => u.split('/').pop())).toEqual(['config.json']);
  });

  it('names a broken JSON file and its source', async () => {
    await expect(fetchFixture('rubric-fixtures/tiny-gpt2', fakeHub({ replace: { 'tokenizer.json': '{"version": ' } }))).rejects.toThrow(
      /tokenizer.json from .*tiny-gpt2 \(revision main\) is not valid JSON/,
    );
  });

  it('reads a chat template kept in chat_template.jinja', async () => {
    const tokConfig = JSON.parse(readFileSync(join(fixtureDir('rubric-fixtures/tiny-qwen2-bf16'), 'tokenizer_config.json'), 'utf8'));
    const template = tokConfig.chat_template;
    delete tokConfig.chat_template;
    const hub = fakeHub({ replace: { 'tokenizer_config.json': JSON.stringify(tokConfig), 'chat_template.jinja': template } });
    const files = await fetchFixture('rubric-fixtures/tiny-qwen2-bf16', hub);
    expect(files.tokenizerConfig!.chat_template).toBe(template);
    expect(hub.requests.some((u) => u.endsWith('/chat_template.jinja'))).toBe(true);
  });
});

describe('picked files', () => {
  it('finds files by name whatever the folder, preferring the top of a picked folder', async () => {
    const files = pickedFiles('rubric-fixtures/tiny-gpt2', { folder: 'my-downloads/gpt2' });
    const copy = new File(['{"model_type": "bert"}'], 'config.json');
    Object.defineProperty(copy, 'webkitRelativePath', { value: 'my-downloads/gpt2/onnx/config.json' });
    const loaded = await localModelFiles([...files, copy]);
    expect(loaded.config.model_type).toBe('gpt2');
  });

  it('names what is missing and what was picked', async () => {
    await expect(localModelFiles([])).rejects.toThrow(/no files were picked/);
    await expect(localModelFiles(pickedFiles('rubric-fixtures/tiny-gpt2', { drop: ['config.json'] }))).rejects.toThrow(
      /config.json is missing: not among the picked files \(tiny-gpt2\/model.safetensors, tiny-gpt2\/tokenizer.json, tiny-gpt2\/tokenizer_config.json\) \(every model needs it; looked in the picked files\)/,
    );
    await expect(localModelFiles(pickedFiles('rubric-fixtures/tiny-gpt2', { drop: ['tokenizer.json'] }))).rejects.toThrow(/tokenizer.json is missing/);
    const twice = [...pickedFiles('rubric-fixtures/tiny-gpt2', { folder: 'a' }), ...pickedFiles('rubric-fixtures/tiny-gpt2', { folder: 'b' })];
    await expect(localModelFiles(twice)).rejects.toThrow(/config.json was picked 2 times \(a\/config.json, b\/config.json\)/);
  });
});
