import { describe, expect, it } from 'vitest';
import { parseExperiment } from '../../../src/rl/experiment';
import { keyFieldIn } from '../../../src/rl/judgeChoice';
import { decodeShareLink, encodeShareLink } from '../../../src/share/link';

const base = {
  model: 'embedded/tiny-gpt2-byte',
  prompts: ['Say hi.'],
  rubric: { name: 'r', criteria: [{ id: 'polite', text: 'Polite', weight: 1, tier: 'important', judge_question: 'Is the response polite?' }] },
};

describe('experiment judge choice', () => {
  it('defaults to rules only', () => {
    expect(parseExperiment(base).judge).toEqual({ kind: 'rules' });
  });

  it('accepts self, model, zero-shot and remote judges', () => {
    expect(parseExperiment({ ...base, judge: { kind: 'self' } }).judge).toEqual({ kind: 'self' });
    expect(parseExperiment({ ...base, judge: { kind: 'model', model: '/models/judge/' } }).judge).toEqual({ kind: 'model', model: '/models/judge/' });
    expect(parseExperiment({ ...base, judge: { kind: 'zero_shot', model: 'Xenova/nli-deberta-v3-xsmall' } }).judge.kind).toBe('zero_shot');
    const remote = { kind: 'remote', url: 'https://api.example.com/v1', model: 'gpt-4o-mini', concurrency: 2, max_tokens: 8, temperature: null };
    expect(parseExperiment({ ...base, judge: remote }).judge).toEqual(remote);
  });

  it('refuses an API key in any spelling, naming the field', () => {
    for (const field of ['api_key', 'apiKey', 'key', 'Authorization', 'token', 'bearer']) {
      const judge = { kind: 'remote', url: 'https://api.example.com/v1', model: 'm', [field]: 'sk-secret' };
      expect(() => parseExperiment({ ...base, judge })).toThrow(new RegExp(`judge: "${field}" is not allowed: an API key never travels`));
    }
    expect(keyFieldIn({ max_tokens: 16, timeout_ms: 1000 })).toBeNull();
  });

  it('rejects bad choices with the field path', () => {
    expect(() => parseExperiment({ ...base, judge: { kind: 'oracle' } })).toThrow(/judge/);
    expect(() => parseExperiment({ ...base, judge: { kind: 'remote', url: 'ftp://x', model: 'm' } })).toThrow(/judge\.url: must be an http\(s\) URL/);
    expect(() => parseExperiment({ ...base, judge: { kind: 'model' } })).toThrow(/judge\.model/);
    expect(() => parseExperiment({ ...base, judge: { kind: 'self', model: 'x' } })).toThrow(/judge/);
  });

  it('travels in a share link without a key', () => {
    const experiment = { ...base, config: {}, judge: { kind: 'remote' as const, url: 'https://api.example.com/v1', model: 'm' } };
    const link = encodeShareLink({ experiment });
    expect(decodeShareLink(link).experiment.judge).toEqual(experiment.judge);
  });
});
