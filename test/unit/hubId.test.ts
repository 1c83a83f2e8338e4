import { describe, expect, it } from 'vitest';
import { checkRepoFile, hubModelId, normalizeEndpoint, parseHubId, resolveUrl } from '../../src/model/hub/hubId';
import { isHubModelId, modelUrl, parseHubModelId } from '../../src/model/registry';

describe('Hub model ids', () => {
  it('parses owner/name with an optional @revision (default main) and the hf: prefix', () => {
    expect(parseHubId('HuggingFaceTB/SmolLM2-135M')).toEqual({ id: 'HuggingFaceTB/SmolLM2-135M', revision: 'main' });
    expect(parseHubId('hf:Qwen/Qwen2.5-0.5B-Instruct@v1.0')).toEqual({ id: 'Qwen/Qwen2.5-0.5B-Instruct', revision: 'v1.0' });
    expect(parseHubId('openai-community/gpt2', 'refs/pr/7')).toEqual({ id: 'openai-community/gpt2', revision: 'refs/pr/7' });
    expect(parseHubId('a/b@0123abcd', '0123abcd').revision).toBe('0123abcd');
  });

  it('rejects malformed ids with a message naming the problem', () => {
    expect(() => parseHubId('')).toThrow(/empty/);
    expect(() => parseHubId('gpt2')).toThrow(/no owner.*openai-community\/gpt2/);
    expect(() => parseHubId('a/b/c')).toThrow(/exactly one "\/"/);
    expect(() => parseHubId('owner/my model')).toThrow(/space/);
    expect(() => parseHubId('../passwd')).toThrow(/owner "\.\."/);
    expect(() => parseHubId('owner/na..me')).toThrow(/"\.\."/);
    expect(() => parseHubId('owner/-name')).toThrow(/name "-name"/);
    expect(() => parseHubId('owner/na--me')).toThrow(/"--"/);
    expect(() => parseHubId(`owner/${'x'.repeat(97)}`)).toThrow(/the name "x{40}…" is 97 characters long \(at most 96\)/);
    expect(parseHubId(`owner/${'x'.repeat(96)}`).id).toHaveLength(102);
    expect(() => parseHubId('/name')).toThrow(/owner is empty/);
    expect(() => parseHubId('a/b@')).toThrow(/revision is empty/);
    expect(() => parseHubId('a/b@../main')).toThrow(/revision "\.\.\/main"/);
    expect(() => parseHubId('a/b@v1', 'v2')).toThrow(/names revision "v1" but "v2"/);
  });

  it('builds resolve URLs as the Hub lays them out, revision encoded', () => {
    expect(resolveUrl('https://huggingface.co', 'openai-community/gpt2', 'main', 'config.json')).toBe(
      'https://huggingface.co/openai-community/gpt2/resolve/main/config.json',
    );
    expect(resolveUrl('https://mirror.example/hub/', 'a/b', 'refs/pr/1', 'model-00001-of-00002.safetensors')).toBe(
      'https://mirror.example/hub/a/b/resolve/refs%2Fpr%2F1/model-00001-of-00002.safetensors',
    );
    expect(resolveUrl('/test/fixtures/hub', 'a/b', 'main', 'tokenizer.json')).toBe('/test/fixtures/hub/a/b/resolve/main/tokenizer.json');
    expect(() => resolveUrl('https://huggingface.co', 'a/b', 'main', '../secret')).toThrow(/not a plain path/);
  });

  it('accepts http(s) and same-server path endpoints only', () => {
    expect(normalizeEndpoint()).toBe('https://huggingface.co');
    expect(normalizeEndpoint('/fixtures/')).toBe('/fixtures');
    expect(() => normalizeEndpoint('ftp://x.org')).toThrow(/http or https/);
    expect(() => normalizeEndpoint('//evil.example')).toThrow(/neither an http\(s\) URL nor a path/);
    expect(() => normalizeEndpoint('https://user:pw@hub.example')).toThrow(/credentials/);
    expect(() => normalizeEndpoint('/a/../b')).toThrow(/"\.\."/);
    expect(() => checkRepoFile('a//b')).toThrow(/not a plain path/);
  });

  it('has an app-level id scheme hf:owner/name[@revision], known to the registry', () => {
    expect(hubModelId({ id: 'a/b', revision: 'main' })).toBe('hf:a/b');
    expect(hubModelId({ id: 'a/b', revision: 'v2' })).toBe('hf:a/b@v2');
    expect(isHubModelId('hf:a/b')).toBe(true);
    expect(isHubModelId('embedded/tiny-gpt2-byte')).toBe(false);
    expect(parseHubModelId('hf:a/b@v2')).toEqual({ id: 'a/b', revision: 'v2' });
    expect(() => parseHubModelId('a/b')).toThrow(/not a Hub model id/);
    expect(() => parseHubModelId('hf:gpt2')).toThrow(/no owner/);
    expect(() => modelUrl('hf:a/b')).toThrow(/fetchHubModelFiles/);
  });
});
