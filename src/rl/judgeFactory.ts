// Turns an experiment's judge choice into a Judge for judge-question criteria: the frozen
// starting policy (self), another model on our engine (loaded here, or by the caller's
// remoteModelJudge in a judge worker), a transformers.js zero-shot pipeline, or a remote
// OpenAI-compatible endpoint. The remote judge's key comes from the caller (memory or
// the user's local storage), never from the experiment.
import type { GpuRuntime } from '../gpu/runtime';
import { loadModel, type LoadedModel, type ModelFiles } from '../model/load';
import type { CriterionResult, Judge } from '../rubric';
import { byDesign, type JudgeScope } from '../rubric/judgeDesign';
import {
  checklistPromptText,
  compactChecklistPromptText,
  compactJudgePromptText,
  compactVerdictPromptText,
  judgePromptText,
  verdictPromptText,
} from '../rubric/judges/modelJudgePrompt';
import { generativeModelJudge } from './generativeJudge';
import { engineWriter } from './engineWriter';
import type { Complete } from '../rubric/generate';
import { remoteJudge } from '../rubric/judges/remote';
import type { JudgeChoice } from './judgeChoice';
import { modelJudge, zeroShotJudge } from './modelJudge';
import { examplesByCriterion, type ProbeExample } from '../rubric/probeLabels';
import type { ProbeSet } from '../rubric/probeSet';
import { probeJudge, trainProbeSet } from './probeJudge';
import type { ExternalGrader } from './externalGrading';
import { completionPairScorer, pairwiseJudge, withPairwise } from '../rubric/pairwiseJudge';
import { enginePairScorer } from './pairwiseEngine';

export interface JudgeSources {
  /** The policy's starting files: the self-judge is a frozen copy of them… */
  policyFiles: ModelFiles;
  /** …unless the starting policy is already on the GPU, frozen (LoRA: the base with adapters off). */
  startingPolicy?: Pick<LoadedModel, 'model' | 'tokenizer' | 'formatPrompt'>;
  /** Files of another model (choice kind 'model'), fetched by the caller. */
  fetchModel: (modelId: string) => Promise<ModelFiles>;
  /** The remote judge's key (kept in memory by the judge object only). */
  apiKey?: string;
  /** The origin the key was entered for: the judge never sends it to an endpoint elsewhere. */
  apiKeyOrigin?: string;
  /**
   * Runs a 'model' judge somewhere else (the trainer worker: in a judge worker with its own GPU
   * runtime); absent, the model is loaded here, on `rt`. Never used for 'self', which shares the
   * policy's weights.
   */
  remoteModelJudge?: (modelId: string) => Promise<{ judge: Judge; release(): void }>;
  /** The probe judge's training data: examples from the verdict labels of the rubric's version. */
  probe?: ProbeTraining;
}

export interface ProbeTraining {
  examples: ProbeExample[];
  rubric: { criteria: readonly { id: string }[] };
  rubricVersion: string;
  /** The judge-question criteria the probe must judge (each needs enough labels). */
  criteria: string[];
  /** Told the fitted probes (the trainer worker stores them with the rubric version). */
  onTrained?: (set: ProbeSet) => void | Promise<void>;
}

export interface BuiltJudge {
  judge: Judge | undefined;
  /** Frees the judge's GPU weights (self and model judges). */
  release: () => void;
}

/** Contexts shorter than this get the compact judge prompt (tiny models, e.g. the embedded default). */
const SHORT_CONTEXT = 1024;

/**
 * A model on our engine as a judge, with the judge prompts its context length allows: the P(yes)
 * margin, or (requests carrying judge_verdict "generative", src/rubric/judgeDesign.ts) a written
 * verdict line per criterion or per checklist (src/rl/generativeJudge.ts), or (judge_verdict
 * "pairwise") the margin of "A" vs "B" over two responses of a group (src/rl/pairwiseEngine.ts).
 */
export function engineJudge(loaded: Pick<LoadedModel, 'model' | 'tokenizer' | 'formatPrompt'>, name: string): Judge & { complete: Complete } {
  const short = loaded.model.config.maxPositions < SHORT_CONTEXT;
  const margin = modelJudge(loaded.model, loaded.tokenizer, {
    name,
    formatPrompt: loaded.formatPrompt,
    buildPrompt: short ? compactJudgePromptText : judgePromptText,
  });
  const generative = (scope: JudgeScope) =>
    generativeModelJudge(loaded.model, loaded.tokenizer, {
      name,
      scope,
      formatPrompt: loaded.formatPrompt,
      buildPrompt: short ? compactVerdictPromptText : verdictPromptText,
      buildChecklistPrompt: short ? compactChecklistPromptText : checklistPromptText,
    });
  const pairwise = pairwiseJudge(name, enginePairScorer(loaded, { compact: short }));
  const pointwise: Judge = {
    name,
    async judge(requests, options = {}) {
      const results = new Array<CriterionResult>(requests.length);
      let before = 0;
      for (const { design, items } of byDesign(requests)) {
        const judge = design.verdict === 'generative' ? generative(design.scope) : margin;
        const part = await judge.judge(
          items.map((i) => requests[i]),
          { signal: options.signal, ...(options.onAnswered ? { onAnswered: (n: number) => options.onAnswered!(before + n) } : {}) },
        );
        items.forEach((i, k) => (results[i] = part[k]));
        before += items.length;
      }
      return results;
    },
  };
  // A text writer too: rubric_evolution and the black-box teacher ask it for criteria (judgeGenerator).
  return { ...withPairwise(pointwise, pairwise), complete: engineWriter(loaded) };
}

/** The name a 'model' judge goes by in results and reasons, wherever it runs. */
export const modelJudgeName = (modelId: string): string => `model:${modelId}`;

/** Loads a model's files onto `rt` as an engine judge; release() frees its weights. */
export async function loadEngineJudge(rt: GpuRuntime, files: ModelFiles, name: string): Promise<{ judge: Judge; release(): void }> {
  const loaded = await loadModel(rt, files, { frozen: true });
  return { judge: engineJudge(loaded, name), release: () => loaded.model.params.destroy() };
}

export async function buildJudge(rt: GpuRuntime, choice: JudgeChoice, sources: JudgeSources): Promise<BuiltJudge> {
  switch (choice.kind) {
    case 'rules':
      return { judge: undefined, release: () => {} };
    case 'self':
    case 'model': {
      if (choice.kind === 'self' && sources.startingPolicy) return { judge: engineJudge(sources.startingPolicy, 'self'), release: () => {} };
      if (choice.kind === 'model' && sources.remoteModelJudge) {
        const remote = await sources.remoteModelJudge(choice.model);
        return { judge: remote.judge, release: () => remote.release() };
      }
      // The self-judge is the starting policy, frozen: training must not move the judge, and its
      // cached verdicts stay valid for the whole run.
      const files = choice.kind === 'self' ? sources.policyFiles : await sources.fetchModel(choice.model);
      return loadEngineJudge(rt, files, choice.kind === 'self' ? 'self' : modelJudgeName(choice.model));
    }
    case 'probe': {
      const training = sources.probe;
      if (!training) throw new Error('the probe judge is trained from the labels stored with the rubric version, and none were given to it');
      examplesByCriterion(training.examples, training.criteria); // too few labels: say so before loading any model
      // Self: the starting policy, frozen (as the self-judge); else another model, loaded frozen here.
      let engine = choice.model === undefined ? sources.startingPolicy : undefined;
      let release = () => {};
      if (!engine) {
        const loaded = await loadModel(rt, choice.model === undefined ? sources.policyFiles : await sources.fetchModel(choice.model), { frozen: true });
        engine = loaded;
        release = () => loaded.model.params.destroy();
      }
      try {
        const set = await trainProbeSet(engine, training.examples, training.rubric, {
          judgeModel: choice.model ?? 'self',
          criteria: training.criteria,
          rubricVersion: training.rubricVersion,
          ...(choice.l2 !== undefined ? { l2: choice.l2 } : {}),
        });
        await training.onTrained?.(set);
        return { judge: probeJudge(engine, set), release };
      } catch (e) {
        release();
        throw e;
      }
    }
    case 'zero_shot':
      return { judge: zeroShotJudge({ model: choice.model }), release: () => {} };
    case 'remote': {
      const remote = remoteJudge({
          url: choice.url,
          model: choice.model,
          ...(sources.apiKey ? { apiKey: sources.apiKey } : {}),
          ...(sources.apiKey && sources.apiKeyOrigin !== undefined ? { apiKeyOrigin: sources.apiKeyOrigin } : {}),
          ...(choice.concurrency !== undefined ? { concurrency: choice.concurrency } : {}),
          ...(choice.max_attempts !== undefined ? { maxAttempts: choice.max_attempts } : {}),
          ...(choice.timeout_ms !== undefined ? { timeoutMs: choice.timeout_ms } : {}),
          ...(choice.temperature !== undefined ? { temperature: choice.temperature } : {}),
          ...(choice.max_tokens !== undefined ? { maxTokens: choice.max_tokens } : {}),
      });
      // judge_verdict "pairwise": one request per ordered pair, the reply one letter (parsed strictly).
      const pairs = completionPairScorer((m, o) => remote.complete(m, o), { concurrency: remote.toJSON().concurrency, ...(typeof choice.max_tokens === 'number' ? { maxTokens: choice.max_tokens } : {}) });
      const judge = Object.assign(withPairwise(remote, pairwiseJudge(remote.name, pairs)), { complete: remote.complete.bind(remote), toJSON: () => remote.toJSON() });
      return { judge, release: () => {} };
    }
  }
}

/**
 * The external judge of judge_external_fraction (src/rl/externalGrading.ts), built like any judge
 * choice from the same sources (a remote one gets the key only when it was entered for its site);
 * none while the fraction is 0. The config refuses self, rules and probe as external judges.
 */
export async function buildExternalGrader(
  rt: GpuRuntime,
  config: { judge_external_fraction: number; judge_external: JudgeChoice | null },
  sources: JudgeSources,
): Promise<{ grader: ExternalGrader | null; release: () => void }> {
  if (config.judge_external_fraction === 0 || config.judge_external === null) return { grader: null, release: () => {} };
  const built = await buildJudge(rt, config.judge_external, sources);
  if (!built.judge) throw new Error(`judge_external ${config.judge_external.kind} answers no judge question`);
  return { grader: { judge: built.judge, fraction: config.judge_external_fraction }, release: built.release };
}
