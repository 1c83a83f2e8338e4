// Page side of test/browser/modelJudge.test.ts: the model judge on the tiny golden GPT-2 against
// last-position logits from independent full forward passes (one unpadded sequence each), and
// the judge worker.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { configFromHf } from '../../../src/model/config';
import { ParameterStore } from '../../../src/model/parameters';
import { readSafetensors } from '../../../src/model/safetensors';
import type { Tokenizer } from '../../../src/model/tokenizer';
import { Transformer } from '../../../src/model/transformer';
import { fromHfTensors } from '../../../src/model/weights';
import { judgeChoiceDistributions, modelJudge, type ItemOutcome } from '../../../src/rl/modelJudge';
import { judgeRollouts, type CriterionResult, type JudgeRequest } from '../../../src/rubric/judge';
import { parseRubric } from '../../../src/rubric/schema';
import { rubricVersion } from '../../../src/rubric/version';
import { startJudgeWorker } from '../../../src/worker/judgeClient';

async function loadGolden(rt: GpuRuntime, name: string): Promise<Transformer> {
  const dir = `/test/golden/${name}`;
  const config = configFromHf(await (await fetch(`${dir}/config.json`)).json());
  const weights = readSafetensors(await (await fetch(`${dir}/model.safetensors`)).arrayBuffer());
  return new Transformer(rt, config, ParameterStore.create(rt, config, fromHfTensors(config, weights.tensors)));
}

/** Characters as tokens code % 60, for the golden model's 61-token vocabulary (60 = BOS/EOS/PAD). */
export class CharTokenizer implements Tokenizer {
  readonly vocabSize = 61;
  readonly eosTokenId = 60;
  readonly padTokenId = 60;
  readonly bosTokenId = 60;
  encode(text: string): number[] {
    return Array.from(text, (ch) => ch.codePointAt(0)! % 60);
  }
  decode(ids: ArrayLike<number>): string {
    return Array.from(ids, (id) => String.fromCharCode(id + 64)).join('');
  }
}

/** A judge prompt short enough for the golden model's 16 positions. */
export const shortPrompt = (r: JudgeRequest) => `${r.criterion.id}${r.prompt}:${r.completion}`;

export interface JudgeCaseInput {
  rubric: unknown;
  /** [criterion index, prompt, completion]. */
  items: [number, string, string][];
  batchSize: number;
}

async function lastLogits(rt: GpuRuntime, model: Transformer, ids: number[]): Promise<number[]> {
  const V = model.config.vocabSize;
  const rec = rt.recorder('reference forward');
  const state = model.forward(rec, { batch: 1, seqLen: ids.length, ids: Uint32Array.from(ids), pads: [0] });
  const row = rec.readF32(state.logits, V, (ids.length - 1) * V);
  await rec.submit();
  const out = Array.from(await row);
  model.release(state);
  return out;
}

export async function judgeVsForward(rt: GpuRuntime, input: JudgeCaseInput) {
  const model = await loadGolden(rt, 'gpt2-tiny');
  const tokenizer = new CharTokenizer();
  const rubric = parseRubric(input.rubric);
  const requests: JudgeRequest[] = input.items.map(([k, prompt, completion]) => ({ rubricVersion: 'v', prompt, completion, criterion: rubric.criteria[k] }));
  const options = { buildPrompt: shortPrompt, batchSize: input.batchSize };
  const submits0 = rt.counters.submits;
  // Which passes the judge records: the inference prefill (head on the last position only), never a training forward.
  const calls = { forward: 0, prefill: [] as { rows: number; logits: string }[] };
  const { forward, prefill } = model;
  model.forward = (...args) => (calls.forward++, forward.apply(model, args));
  model.prefill = (rec, tokens, options) => (calls.prefill.push({ rows: tokens.batch, logits: options?.logits ?? 'last' }), prefill.call(model, rec, tokens, options));
  const outcomes: ItemOutcome[] = await judgeChoiceDistributions(model, tokenizer, requests, options);
  Object.assign(model, { forward, prefill });
  const submits = rt.counters.submits - submits0;
  const results: CriterionResult[] = await modelJudge(model, tokenizer, options).judge(requests);
  // Independently: the prompt text, the answer prefix " " as its own token, one unpadded forward.
  const reference: (number[] | null)[] = [];
  const prompts: number[][] = [];
  for (const r of requests) {
    const ids = tokenizer.encode(`${shortPrompt(r)} `);
    prompts.push(ids);
    reference.push(ids.length <= model.config.maxPositions ? await lastLogits(rt, model, ids) : null);
  }
  const aborted = new AbortController();
  aborted.abort();
  const abort = await modelJudge(model, tokenizer, options)
    .judge(requests, { signal: aborted.signal })
    .then(() => 'resolved', (e: Error) => e.name);
  model.params.destroy();
  return { outcomes, results, reference, prompts, submits, abort, calls };
}

export async function judgeWorker(_rt: GpuRuntime, input: { rubric: unknown; rollouts: { prompt: string; completion: string }[]; apiKey: string }) {
  const client = startJudgeWorker();
  try {
    // Port 9 (discard) refuses connections: the remote judge fails fast with a network error.
    const configured = await client.configure({ remote: { url: 'http://127.0.0.1:9/v1', model: 'judge-mini', apiKey: input.apiKey, maxAttempts: 1 } });
    const first = await client.judge(input.rubric, input.rollouts);
    const second = await client.judge(input.rubric, input.rollouts);
    const rubric = parseRubric(input.rubric);
    const onPage = await judgeRollouts(rubric, await rubricVersion(rubric), input.rollouts);
    const stopped = new AbortController();
    stopped.abort();
    const abort = await client.judge(input.rubric, input.rollouts, { signal: stopped.signal }).then(() => 'resolved', (e: Error) => e.name);
    const badRubric = await client.judge({ name: 'bad', criteria: [] }, input.rollouts).then(() => 'resolved', (e: Error) => e.message);
    const cleared = await client.configure({ remote: null });
    const rulesOnly = await client.judge(input.rubric, input.rollouts);
    return { configured, first, second, onPage, abort, badRubric, cleared, rulesOnly, state: await client.state() };
  } finally {
    client.terminate();
  }
}

export interface ProbeCaseInput {
  rubric: unknown;
  /** [prompt, completion, the person's call] for criterion 0. */
  labelled: [string, string, boolean][];
  /** [prompt, completion] to judge with the trained probe. */
  judged: [string, string][];
}

/** The final hidden state (after the final norm) at the last token of one unpadded full forward pass. */
async function lastHidden(rt: GpuRuntime, model: Transformer, ids: number[]): Promise<number[]> {
  const D = model.config.hiddenSize;
  const rec = rt.recorder('reference forward');
  const state = model.forward(rec, { batch: 1, seqLen: ids.length, ids: Uint32Array.from(ids), pads: [0] });
  const row = rec.readF32(state.finalNorm.y, D, (ids.length - 1) * D);
  await rec.submit();
  const out = Array.from(await row);
  model.release(state);
  return out;
}

/**
 * The probe judge on the golden model: hidden states from batched, left-padded prefill passes
 * against lone full forward passes; a probe trained from labels; its scores on new rollouts; and
 * the too-few-labels refusal.
 */
export async function probeVsForward(rt: GpuRuntime, input: ProbeCaseInput) {
  const { finalHiddenStates, probeInputIds, probeJudge, trainProbeSet } = await import('../../../src/rl/probeJudge');
  const model = await loadGolden(rt, 'gpt2-tiny');
  const tokenizer = new CharTokenizer();
  const engine = { model, tokenizer, formatPrompt: (t: string) => tokenizer.encode(t), buildPrompt: shortPrompt };
  const rubric = parseRubric(input.rubric);
  const criterion = rubric.criteria[0];
  const examples = input.labelled.map(([prompt, completion, target]) => ({ criterion_id: criterion.id, prompt, completion, target }));
  const set = await trainProbeSet(engine, examples, rubric, { judgeModel: 'self', criteria: [criterion.id], rubricVersion: 'v' });
  const requests: JudgeRequest[] = input.judged.map(([prompt, completion]) => ({ rubricVersion: 'v', prompt, completion, criterion }));
  const ids = requests.map((r) => probeInputIds(engine, r));
  const batched = (await finalHiddenStates(model, ids, undefined, 3)).map((h) => Array.from(h));
  const reference: number[][] = [];
  for (const s of ids) reference.push(await lastHidden(rt, model, s));
  const results = await probeJudge(engine, set).judge(requests);
  const tooFew = await trainProbeSet(engine, examples.slice(0, 4), rubric, { judgeModel: 'self', criteria: [criterion.id], rubricVersion: 'v' }).then(
    () => 'resolved',
    (e: Error) => e.message,
  );
  model.params.destroy();
  return { set, ids, batched, reference, results, tooFew, hiddenSize: model.config.hiddenSize };
}

// ---- the pairwise judge (judge_verdict "pairwise") on the byte-level fixture model ----

export interface PairwiseCaseInput {
  /** One group per entry: a prompt and its responses. */
  groups: { prompt: string; completions: string[] }[];
  question: string;
}

/**
 * Every ordered pair of each group through the engine pair scorer and the pairwise judge; each
 * margin checked against z["A"] − z["B"] of an independent unpadded forward over the same ids.
 * The prompt skips the fixture's instruction template: its 128-byte context could not hold the
 * template and a pair.
 */
export async function pairwiseOnFixture(rt: GpuRuntime, input: PairwiseCaseInput) {
  const { fetchModelFiles, loadModel } = await import('../../../src/model/load');
  const { enginePairScorer } = await import('../../../src/rl/pairwiseEngine');
  const { pairwiseJudge } = await import('../../../src/rubric/pairwiseJudge');
  const { compactPairPromptText, fitPairPrompt } = await import('../../../src/rubric/judges/pairwisePrompt');
  const { pairwiseComparisons } = await import('../../../src/rubric/pairwise');
  const { positionBias } = await import('../../../src/rubric/judgeMeta');
  const loaded = await loadModel(rt, await fetchModelFiles('/test/fixtures/tiny-byte-gpt2/'), { frozen: true });
  const { model, tokenizer } = loaded;
  const formatPrompt = (text: string) => [tokenizer.bosTokenId!, ...tokenizer.encode(text)];
  const engine = { model, tokenizer, formatPrompt };
  const criterion = { id: 'kind', text: 'Kind', weight: 1, tier: 'important' as const, judge_question: input.question, choices: ['no', 'yes'] };
  const requests: JudgeRequest[] = input.groups.flatMap((g) => g.completions.map((completion) => ({ rubricVersion: 'v', prompt: g.prompt, completion, criterion, design: { verdict: 'pairwise' as const, scope: 'per_criterion' as const } })));
  const pairs = input.groups.flatMap((g) =>
    g.completions.flatMap((a, i) => g.completions.flatMap((b, j) => (i === j ? [] : [{ request: requests.find((r) => r.prompt === g.prompt)!, first: a, second: b }]))),
  );
  const outcomes = await enginePairScorer(engine, { compact: true, batchSize: 4 })(pairs, {});
  // Independently: the documented fit (prompt and both responses cut alike to the context less
  // the answer prefix " ", a token of its own here), then one unpadded forward.
  const reference: number[] = [];
  const cuts: (number | null)[] = [];
  const promptTokens: number[] = [];
  const [A, B] = [tokenizer.encode('A')[0], tokenizer.encode('B')[0]];
  for (const p of pairs) {
    const fitted = fitPairPrompt(p, compactPairPromptText, formatPrompt, model.config.maxPositions - 1);
    const ids = [...fitted.ids, ...tokenizer.encode(' ')];
    const z = await lastLogits(rt, model, ids);
    reference.push(z[A] - z[B]);
    cuts.push(fitted.cut);
    promptTokens.push(ids.length);
  }
  const results = await pairwiseJudge('self', enginePairScorer(engine, { compact: true })).judge(requests);
  let k = 0;
  const groups = input.groups.map((g, gi) => ({ group: `0/${gi}`, step: 0, results: g.completions.map(() => [results[k++]]) }));
  const bias = positionBias(pairwiseComparisons(['kind'], groups, null, { seed: 1 }));
  model.params.destroy();
  return { outcomes, reference, cuts, results, bias, promptTokens, context: model.config.maxPositions };
}
