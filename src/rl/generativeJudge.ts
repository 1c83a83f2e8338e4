// The generative model judge (judge_verdict "generative", issue 13): a model on our engine writes
// its verdict as a line (src/rubric/judges/verdictLine.ts: answer, quote, short reason), greedy,
// through the same batched sampler as the policy's rollouts (src/model/generate.ts). Per
// criterion, each request is one prompt and generation stops at the first newline; in checklist
// scope, the requests of one response (same prompt and completion) share one prompt, which asks for
// one numbered line per criterion, and the reply is cut after that many lines. All prompts of a
// judge() call go through a few generate() calls: prompts sorted by length, packed into batches
// whose prompt plus generation fits the judge model's context.
//
// Malformed output (no line, an unknown answer, no reason, a checklist line missing or twice) is
// unscorable with the reason and the judge's words, exactly like any other judge failure. A quote
// found in the response becomes the verdict's span, so evidence-required credit works here.
// Greedy decoding makes the verdicts deterministic: the judge cache stays valid.
import { generate } from '../model/generate';
import type { Tokenizer } from '../model/tokenizer';
import type { Transformer } from '../model/transformer';
import { unscorable, type CriterionResult, type Judge, type JudgeRequest } from '../rubric/judge';
import { groupAsks, type JudgeScope } from '../rubric/judgeDesign';
import { checklistPromptText, questionOf, verdictPromptText } from '../rubric/judges/modelJudgePrompt';
import { excerpt, parseChecklist, parseVerdictLine, verdictResult, type ParsedVerdict } from '../rubric/judges/verdictLine';
import { planPasses } from './modelJudge';

/** Greedy continuations of token prompts: what the judge needs of a model (a fake in unit tests). */
export interface VerdictGenerator {
  /** The model's context (prompt + generated tokens). */
  readonly contextLength: number;
  /** Prompt text → token ids (BOS or a chat template included). */
  encode(text: string): number[];
  /**
   * Per prompt, the decoded text of up to `maxNewTokens` greedy tokens; with `stopAtNewline`,
   * generation of a row may stop at its first newline token (the judge cuts there anyway).
   */
  generate(prompts: readonly (readonly number[])[], maxNewTokens: number, stopAtNewline: boolean, signal?: AbortSignal): Promise<string[]>;
}

export interface GenerativeJudgeOptions {
  name?: string;
  scope?: JudgeScope;
  /** The per-criterion prompt (default verdictPromptText; compactVerdictPromptText suits short contexts). */
  buildPrompt?: (request: JudgeRequest) => string;
  /** The checklist prompt (default checklistPromptText; compactChecklistPromptText suits short contexts). */
  buildChecklistPrompt?: (requests: readonly JudgeRequest[]) => string;
  /** Generated tokens allowed per verdict line (default 64). */
  lineTokens?: number;
  /** Fewest tokens a verdict line may be given (default 32): a prompt leaving less room is refused. */
  minLineTokens?: number;
  /** Most prompts per generate() call (default 8). */
  batchSize?: number;
  /** Most token positions (prompts × (prompt + generation)) per generate() call (default 8192). */
  maxTokensPerPass?: number;
}

/** One prompt of the call: one request (per criterion) or one response's requests (checklist). */
interface Ask {
  /** Indices into the call's requests, in the order the prompt lists them. */
  items: number[];
  ids: number[];
  /** Generation budget wanted: lines × lineTokens. */
  wanted: number;
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason instanceof Error ? signal.reason : new DOMException('the judge was stopped', 'AbortError');
}

/** The reply of a checklist of `count` lines: cut after its count-th newline (like the per-criterion stop at the first). */
export function cutLines(text: string, count: number): string {
  let at = -1;
  for (let n = 0; n < count; n++) {
    at = text.indexOf('\n', at + 1);
    if (at < 0) return text;
  }
  return text.slice(0, at);
}

/**
 * A judge whose verdicts `generator` writes. Options are checked now (RangeError). A prompt that
 * does not fit the context with room for its verdict lines is unscorable with both sizes named.
 */
export function generativeJudge(generator: VerdictGenerator, options: GenerativeJudgeOptions = {}): Judge {
  const scope = options.scope ?? 'per_criterion';
  const lineTokens = options.lineTokens ?? 64;
  const minLineTokens = options.minLineTokens ?? 32;
  const batchSize = options.batchSize ?? 8;
  const maxTokensPerPass = options.maxTokensPerPass ?? 8192;
  for (const [k, v] of Object.entries({ lineTokens, minLineTokens, batchSize, maxTokensPerPass })) {
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`${k} must be a positive integer, got ${v}`);
  }
  if (minLineTokens > lineTokens) throw new RangeError(`minLineTokens ${minLineTokens} is above lineTokens ${lineTokens}`);
  const buildPrompt = options.buildPrompt ?? verdictPromptText;
  const buildChecklist = options.buildChecklistPrompt ?? checklistPromptText;
  const ctx = generator.contextLength;
  const where = scope === 'checklist' ? 'checklist' : 'verdict';

  return {
    name: options.name ?? 'model',
    async judge(requests, judgeOptions = {}): Promise<CriterionResult[]> {
      const { signal, onAnswered } = judgeOptions;
      if (signal?.aborted) throw abortError(signal);
      const results = new Array<CriterionResult>(requests.length);
      const asks: Ask[] = [];
      for (const items of groupAsks(requests, scope)) {
        try {
          const group = items.map((i) => requests[i]);
          group.forEach(questionOf); // a rule criterion has nothing to ask: say so
          const text = group.length === 1 ? buildPrompt(group[0]) : buildChecklist(group);
          const ids = generator.encode(text);
          if (ids.length === 0) throw new RangeError('the judge prompt encodes to no tokens');
          const need = ids.length + group.length * minLineTokens;
          if (need > ctx) {
            throw new RangeError(
              `the ${group.length === 1 ? 'judge' : `checklist (${group.length} criteria)`} prompt is ${ids.length} tokens; with ${group.length === 1 ? '' : `${group.length} × `}${minLineTokens} tokens for its verdict line${group.length === 1 ? '' : 's'} that is ${need}, beyond the judge model's context of ${ctx}` +
                (group.length > 1 ? ': use judge_scope "per_criterion" or a judge model with a longer context' : ''),
            );
          }
          asks.push({ items, ids, wanted: group.length * lineTokens });
        } catch (e) {
          for (const i of items) results[i] = unscorable(requests[i].criterion.id, (e as Error).message);
        }
      }
      // Prompts that want the same budget share passes (the budget is per generate() call).
      const byBudget = new Map<number, Ask[]>();
      for (const a of asks) byBudget.set(a.wanted, [...(byBudget.get(a.wanted) ?? []), a]);
      let answered = results.reduce((n) => n + 1, 0);
      for (const [wanted, group] of byBudget) {
        const passes = planPasses(
          group.map((a) => Math.min(ctx, a.ids.length + wanted)),
          { batchSize, maxTokensPerPass, maxPositionsPerBinding: Number.MAX_SAFE_INTEGER },
        );
        for (const pass of passes) {
          if (signal?.aborted) throw abortError(signal);
          const batch = pass.map((i) => group[i]);
          const longest = Math.max(...batch.map((a) => a.ids.length));
          const maxNew = Math.min(wanted, ctx - longest);
          const lines = Math.max(...batch.map((a) => a.items.length));
          let texts: string[] | null = null;
          let failure = '';
          try {
            texts = await generator.generate(
              batch.map((a) => a.ids),
              maxNew,
              lines === 1,
              signal,
            );
            if (!Array.isArray(texts) || texts.length !== batch.length) throw new Error(`the generator returned ${Array.isArray(texts) ? texts.length : 'no'} texts for ${batch.length} prompts`);
          } catch (e) {
            if (signal?.aborted) throw abortError(signal);
            texts = null;
            failure = `the judge's generation failed: ${(e as Error)?.message ?? String(e)}`;
          }
          batch.forEach((a, b) => {
            const group = a.items.map((i) => requests[i]);
            if (texts === null) {
              for (const i of a.items) results[i] = unscorable(requests[i].criterion.id, failure);
              return;
            }
            const reply = texts[b];
            const choices = group.map((r) => questionOf(r).choices);
            const parsed: ParsedVerdict[] =
              a.items.length === 1 ? [parseVerdictLine(reply.split('\n')[0], choices[0])] : parseChecklist(cutLines(reply, a.items.length), choices);
            a.items.forEach((i, k) => {
              const r = requests[i];
              const out = verdictResult(r.criterion.id, choices[k], r.completion, parsed[k], a.items.length > 1 ? `checklist of ${a.items.length}: ` : '');
              // A malformed reply is quoted (shortened) so the failure can be read, not guessed.
              results[i] = parsed[k].ok ? out : unscorable(r.criterion.id, `${out.reason} (the ${where} reply: ${excerpt(reply, 160)})`);
            });
          });
          answered += batch.reduce((n, a) => n + a.items.length, 0);
          onAnswered?.(answered);
        }
      }
      if (signal?.aborted) throw abortError(signal);
      return results;
    },
  };
}

/** The newline token of a tokenizer when "\n" is one token of its own; else null (generation then stops at EOS or the budget). */
export function newlineToken(tokenizer: Tokenizer): number | null {
  const ids = tokenizer.encode('\n');
  return ids.length === 1 ? ids[0] : null;
}

/** A model on our engine as a verdict generator: greedy, one generate() call per batch. */
export function engineVerdictGenerator(model: Transformer, tokenizer: Tokenizer, formatPrompt?: (text: string) => number[]): VerdictGenerator {
  const newline = newlineToken(tokenizer);
  return {
    contextLength: model.config.maxPositions,
    encode: formatPrompt ?? ((text) => tokenizer.encode(text)),
    async generate(prompts, maxNewTokens, stopAtNewline, signal) {
      if (signal?.aborted) throw abortError(signal);
      const eos = stopAtNewline && newline !== null ? newline : tokenizer.eosTokenId;
      const out = await generate(model, prompts, { max_completion_length: maxNewTokens, temperature: 0, top_k: 0, top_p: 1, seed: 0 }, { eosTokenId: eos });
      return out.completions.map((ids) => tokenizer.decode(ids));
    },
  };
}

/** The generative judge on a model of our engine. */
export function generativeModelJudge(
  model: Transformer,
  tokenizer: Tokenizer,
  options: GenerativeJudgeOptions & { formatPrompt?: (text: string) => number[] } = {},
): Judge {
  const { formatPrompt, ...rest } = options;
  return generativeJudge(engineVerdictGenerator(model, tokenizer, formatPrompt), rest);
}
