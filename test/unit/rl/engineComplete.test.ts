// Drafting a rubric with a model on our engine, without a GPU: a fake sampler stands in for
// src/model/generate.ts. The request is fitted into the model's context (first token + tail), the
// reply is decoded up to EOS, and the reply goes through the same strict parser as a remote
// model's: a small model's babble is a GenerationError, never a partial rubric.
import { describe, expect, it } from 'vitest';
import { completionBudget, completionLimits, engineComplete, keepPromptTail, type SampleIds } from '../../../src/rl/engineComplete';
import { draftRubric, GenerationError } from '../../../src/rubric/generate';
import { ByteTokenizer } from '../../../src/model/tokenizer';
import { EngineDrafter } from '../../../src/ui/lib/engineDrafter';
import type { JudgeWorkerClient } from '../../../src/worker/judgeClient';

const tok = new ByteTokenizer();
const parts = (context: number) => ({ formatPrompt: (t: string) => [tok.bosTokenId, ...tok.encode(`Instruction: ${t}\nResponse: `)], tokenizer: tok, contextLength: context });
/** A sampler that replies `text` (then EOS unless `noEos`), cut at maxNew, recording what it was given. */
function fakeSampler(text: string, seen: { prompt?: readonly number[]; maxNew?: number; temperature?: number }[] = [], noEos = false): SampleIds {
  return async (prompt, s) => {
    seen.push({ prompt, maxNew: s.maxNew, temperature: s.temperature });
    return { ids: [...tok.encode(text), ...(noEos ? [] : [tok.eosTokenId])].slice(0, s.maxNew) };
  };
}

const RUBRIC = JSON.stringify({ criteria: [{ id: 'names_moon', text: 'Names the moon', weight: 2, tier: 'essential', judge_question: 'Does it name the moon?' }] });

describe('completionBudget and keepPromptTail', () => {
  it('gives the reply what the prompt leaves, at least half the context, and cuts a long prompt to first + tail', () => {
    expect(completionBudget(100, 8192, 1500)).toEqual({ maxNew: 1500, keep: 100 });
    expect(completionBudget(7000, 8192, 1500)).toEqual({ maxNew: 1500, keep: 6692 });
    expect(completionBudget(7000, 8192, 4000)).toEqual({ maxNew: 4000, keep: 4192 });
    expect(completionBudget(3000, 8192, 6000)).toEqual({ maxNew: 5192, keep: 3000 });
    expect(completionBudget(1600, 128, 1500)).toEqual({ maxNew: 64, keep: 64 });
    expect(completionBudget(10, 128, 40)).toEqual({ maxNew: 40, keep: 10 });
    expect(keepPromptTail([9, 1, 2, 3, 4, 5], 3)).toEqual([9, 4, 5]);
    expect(keepPromptTail([9, 1, 2], 5)).toEqual([9, 1, 2]);
    expect(() => completionBudget(5, 1, 10)).toThrow(/at least 2/);
  });
});

describe('engineComplete', () => {
  it('formats system + user as one prompt, decodes up to EOS, and reports nothing cut in a large context', async () => {
    const seen: { prompt?: readonly number[] }[] = [];
    const out = await engineComplete(parts(8192), fakeSampler(RUBRIC, seen), { system: 'SYS', user: 'USER' }, { maxTokens: 400 });
    expect(out.text).toBe(RUBRIC);
    expect(tok.decode(seen[0].prompt!)).toBe('Instruction: SYS\n\nUSER\nResponse: ');
    expect(out.keptPromptTokens).toBe(out.promptTokens);
    expect(out.truncated).toBe(false);
    expect(completionLimits(out)).toEqual([]);
    // A usable reply becomes the rubric through the strict parser.
    const rubric = await draftRubric((m) => engineComplete(parts(8192), fakeSampler(RUBRIC), m).then((c) => c.text), 'Why are there tides?');
    expect(rubric.criteria.map((c) => c.id)).toEqual(['names_moon']);
  });

  it('a tiny context: the request is cut, the reply stops at its budget, and the babble is a GenerationError', async () => {
    const seen: { prompt?: readonly number[]; maxNew?: number }[] = [];
    let last: Awaited<ReturnType<typeof engineComplete>> | null = null;
    const complete = async (m: { system: string; user: string }) => {
      last = await engineComplete(parts(128), fakeSampler('Response: the the the the the the the the the the the the the the the', seen, true), m);
      return last.text;
    };
    const err = await draftRubric(complete, 'Why are there tides?').catch((e) => e);
    expect(err).toBeInstanceOf(GenerationError);
    expect((err as GenerationError).problems.join(' ')).toMatch(/JSON/);
    expect(seen[0].maxNew).toBe(64);
    expect(seen[0].prompt!.length).toBe(64);
    expect(seen[0].prompt![0]).toBe(tok.bosTokenId);
    expect(tok.decode(seen[0].prompt!)).toMatch(/Response: $/);
    const limits = completionLimits(last!);
    expect(limits[0]).toMatch(/holds 128 tokens: it saw only 64 of the request's \d{4} tokens/);
    expect(limits[1]).toMatch(/stopped at the 64-token limit/);
  });

  it('a truncated JSON reply is an error, not a partial rubric', async () => {
    const err = await draftRubric((m) => engineComplete(parts(8192), fakeSampler(RUBRIC.slice(0, 60)), m).then((c) => c.text), 'Why?').catch((e) => e);
    expect(err).toBeInstanceOf(GenerationError);
  });
});

describe('EngineDrafter', () => {
  function fakeClient(log: string[], reply = RUBRIC, failLoad = false): JudgeWorkerClient {
    return {
      configure: async (config) => {
        log.push(`configure ${config.model?.modelId}`);
        if (failLoad) throw new Error('could not load the judge model');
        return { remote: null, cache: { entries: 0, hits: 0, misses: 0 } } as never;
      },
      complete: async (_m, o) => {
        log.push(`complete t=${o?.temperature} seed=${o?.seed} max=${o?.maxTokens}`);
        return { text: reply, promptTokens: 10, keptPromptTokens: 10, contextLength: 128, replyTokens: 5, maxReplyTokens: 64, truncated: false, seconds: 0 };
      },
      judge: async () => {
        throw new Error('unused');
      },
      judgeQuestions: async () => [],
      state: async () => ({}) as never,
      terminate: () => log.push('terminate'),
    };
  }

  it('loads a model once per choice, samples with fresh seeds, and starts afresh after a failed load', async () => {
    const log: string[] = [];
    let failNext = true;
    const drafter = new EngineDrafter(() => {
      const c = fakeClient(log, RUBRIC, failNext);
      failNext = false;
      return c;
    });
    const model = { modelId: 'embedded/tiny-gpt2-byte' };
    await expect(drafter.completer(model)({ system: 's', user: 'u' })).rejects.toThrow(/could not load/);
    expect(await drafter.completer(model)({ system: 's', user: 'u' })).toBe(RUBRIC);
    await drafter.completer(model, 0.8)({ system: 's', user: 'u' });
    await drafter.completer(model, 0.8)({ system: 's', user: 'u' });
    await drafter.completer({ modelId: 'hf:HuggingFaceTB/SmolLM2-135M-Instruct' })({ system: 's', user: 'u' });
    expect(log).toEqual([
      'configure embedded/tiny-gpt2-byte',
      'terminate',
      'configure embedded/tiny-gpt2-byte',
      'complete t=0 seed=0 max=1500',
      'complete t=0.8 seed=1 max=1500',
      'complete t=0.8 seed=2 max=1500',
      'terminate',
      'configure hf:HuggingFaceTB/SmolLM2-135M-Instruct',
      'complete t=0 seed=0 max=1500',
    ]);
    expect(drafter.limits()).toEqual([]);
  });
});
