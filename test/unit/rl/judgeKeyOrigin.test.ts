// The trainer's judge factory hands the remote judge the origin its key was entered for, so a
// key bound to one site never reaches an experiment's endpoint at another (the page binds keys;
// this is the engine's own check behind it).
import { describe, expect, it } from 'vitest';
import type { GpuRuntime } from '../../../src/gpu/runtime';
import type { ModelFiles } from '../../../src/model/load';
import { buildJudge, type JudgeSources } from '../../../src/rl/judgeFactory';
import { parseRubric } from '../../../src/rubric/schema';

const rubric = parseRubric({ name: 'r', criteria: [{ id: 'polite', text: 'Is polite', weight: 1, tier: 'important', judge_question: 'Is it polite?' }] });
const request = { rubricVersion: 'v1', prompt: 'Say hi', completion: 'hello', criterion: rubric.criteria[0] };
const sources = (extra: Partial<JudgeSources>): JudgeSources => ({
  policyFiles: {} as ModelFiles,
  fetchModel: () => Promise.reject(new Error('no model judge here')),
  ...extra,
});
const choice = { kind: 'remote', url: 'http://127.0.0.1:9/v1/chat/completions', model: 'judge-model', max_attempts: 1, timeout_ms: 2000 } as const;

describe('judge factory: the remote judge key keeps its origin', () => {
  it('a key bound to another origin is refused before any request', async () => {
    const { judge } = await buildJudge({} as GpuRuntime, choice, sources({ apiKey: 'sk-elsewhere', apiKeyOrigin: 'http://127.0.0.1:8' }));
    expect(JSON.stringify(judge)).toContain('"hasApiKey":false');
    const [out] = await judge!.judge([request]);
    expect(out.status).toBe('unscorable');
    expect(out.reason).toContain('the API key was entered for "http://127.0.0.1:8"');
    expect(out.reason).toContain('"http://127.0.0.1:9"');
    expect(JSON.stringify(out)).not.toContain('sk-elsewhere');
  });

  it('a key bound to the endpoint\'s own origin is kept', async () => {
    const { judge } = await buildJudge({} as GpuRuntime, choice, sources({ apiKey: 'sk-here', apiKeyOrigin: 'http://127.0.0.1:9' }));
    expect(JSON.stringify(judge)).toContain('"hasApiKey":true');
  });
});
