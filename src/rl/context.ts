// Builds everything one GRPO step needs from an experiment and model files: the policy (or a
// checkpoint of it), the frozen KL reference, the rubric and its version, the judges.
import type { GpuRuntime } from '../gpu/runtime';
import { checkpointEmaFiles, checkpointModelFiles, checkpointReferenceFiles, parseTrainerState, restoreLoraCheckpoint, type CheckpointFiles } from '../model/checkpoint';
import { fetchModelFiles, loadModel, modelUrl, type ModelFiles } from '../model/load';
import { warmModelPipelines } from '../model/warmup';
import { loraConfigFromTrl } from '../model/lora';
import type { Transformer } from '../model/transformer';
import { JudgeCache, rubricVersion, type Judge } from '../rubric';
import { evidenceJudges } from '../rubric/evidenceCredit';
import { designedJudge, judgeDesignOf } from '../rubric/judgeDesign';
import { judgedRubric } from '../rubric/holistic';
import type { OriginBoundKey } from '../rubric/judges/remote';
import { parseExperiment } from './experiment';
import type { GrpoContext } from './grpoStep';
import { buildExternalGrader, buildJudge, type JudgeSources, type ProbeTraining } from './judgeFactory';
import { questionIds } from '../rubric/judgeMeta';
import type { GrpoConfig } from './config';
import { referenceDrifted } from './refSync';
import { resumedIrtState } from './irtResume';
import { judgeGenerator, resumedEvolvedRubric } from './rubricEvolution';
import { needsFrozenTeacher } from './distill/teacher';
import { blackBoxState, resumedInducedRubric } from './distill/blackBox';
import { tokenizerMismatch } from './distill/tokenizerCheck';
import { needsEmaTeacher } from './distill/ema';

export interface ContextOptions {
  /** Overrides the experiment's judge choice (tests inject judges here). */
  modelJudge?: Judge;
  /** Overrides config.judge_external while judge_external_fraction > 0 (tests inject judges here). */
  externalJudge?: Judge;
  judgeCache?: JudgeCache;
  /** Resume: the policy (and its AdamW moments) come from this checkpoint instead of `files`. */
  resume?: CheckpointFiles;
  /**
   * The remote judge's API key: held in memory, never stored with the run. The page's worker
   * passes it with the origin it was entered for (the judge never sends it elsewhere); a bare
   * string is for callers that read the key for this very experiment (CLI scripts, tests).
   */
  judgeApiKey?: string | OriginBoundKey;
  /** The black-box teacher endpoint's key, bound to its site (default: the judge's key when that one is bound; it reaches only its own site). */
  teacherApiKey?: OriginBoundKey;
  /** Fetches another model's files for a 'model' judge (default: by the model registry's URL). */
  fetchModel?: (modelId: string) => Promise<ModelFiles>;
  /** Runs a 'model' judge elsewhere (the trainer worker: in a judge worker); default: loaded on `rt`. */
  remoteModelJudge?: JudgeSources['remoteModelJudge'];
  /** The probe judge's labelled examples (the trainer worker reads them from the store), and who keeps the fitted probes. */
  probe?: Pick<ProbeTraining, 'examples' | 'onTrained'>;
}

/** The judge factory's key fields for a bare or an origin-bound key. */
function judgeKeySources(key: string | OriginBoundKey | undefined): Pick<JudgeSources, 'apiKey' | 'apiKeyOrigin'> {
  if (key === undefined || typeof key === 'string') return { apiKey: key };
  // It crossed a worker boundary: a malformed one is refused rather than sent unbound.
  if (key === null || typeof key !== 'object' || typeof key.key !== 'string' || typeof key.origin !== 'string') {
    throw new TypeError("the judge's API key must come with the origin it was entered for");
  }
  return { apiKey: key.key, apiKeyOrigin: key.origin };
}

/**
 * Loads the policy (full fine-tuning, or a frozen base with LoRA adapters when use_peft), the KL
 * reference when beta > 0 (under LoRA the same weights with the adapters off, no copy; else a
 * second load of the starting files) and the judge, and builds the step context.
 */
export async function buildGrpoContext(rt: GpuRuntime, input: unknown, files: ModelFiles, options: ContextOptions = {}): Promise<GrpoContext> {
  const { rubric: checklist, heldOutRubric, config, judge: judgeChoice, judgeBias } = parseExperiment(input);
  // holistic_likert: the judges also score the holistic Likert criterion (src/rubric/holistic.ts).
  const rubric = judgedRubric(checklist, config.reward_aggregation.method);
  const lora = config.use_peft;
  // A LoRA run resumes from its adapter: the base is always the starting files. A full run
  // resumes from the checkpoint's weights and moments, with the starting model's tokenizer.
  const policyFiles = options.resume && !lora ? { ...checkpointModelFiles(options.resume), tokenizerJson: files.tokenizerJson, tokenizerConfig: files.tokenizerConfig } : files;
  // Under LoRA the base never gets gradient buffers: attachLora adds the adapters' own.
  const loaded = await loadModel(rt, policyFiles, { frozen: lora });
  const owned: { params: { destroy(): void } }[] = [loaded.model];
  let releaseJudge = () => {};
  try {
    if (lora) {
      if (options.resume) await restoreLoraCheckpoint(loaded.model, options.resume);
      else loaded.model.attachLora(loraConfigFromTrl(config), config.seed);
    }
    // Compile the run's kernels now, off the queue, while the judge loads and the visitor reads
    // the page, rather than inside the first step (issue 18). Shapes are the run's, roughly:
    // only which matmul path a shape picks matters, not its exact length. Never fails the load.
    void warmModelPipelines(loaded.model, {
      train: { batch: config.per_device_train_batch_size ?? config.num_generations, seqLen: 16 + config.max_completion_length },
      sample: { batch: config.generation_batch_size, promptLen: 16 },
    });
    // The KL reference is the starting model, also when resuming from a checkpoint, unless
    // sync_ref_model has mixed the policy into it: then the checkpoint carries it. The frozen
    // self_rubric distillation teacher is the same starting weights (src/rl/distill/teacher.ts).
    let reference: Transformer | null = null;
    if (config.beta > 0 || needsFrozenTeacher(config)) {
      if (lora) reference = loaded.model.withoutAdapters();
      else {
        reference = (await loadModel(rt, referenceFiles(config, files, options.resume))).model;
        owned.push(reference);
      }
    }
    // The ema teacher (src/rl/distill/ema.ts): a separate copy of the policy's weights as the run
    // starts (a resumed run: the averaged weights its checkpoint saved), loaded frozen; averaged
    // with the policy every step.
    let emaTeacher: Transformer | null = null;
    if (needsEmaTeacher(config)) {
      emaTeacher = (await loadModel(rt, emaTeacherFiles(policyFiles, files, options.resume), { frozen: true })).model;
      owned.push(emaTeacher);
    }
    // The distillation teacher model: the student's tokenizer is checked on the files, before any
    // weight is loaded; then inference passes only (frozen: no gradient buffers, no optimizer state).
    let distillModel: GrpoContext['distillModel'] = null;
    if (config.distillation.teacher === 'model') {
      const id = config.distillation.teacher_model!;
      const teacherFiles = await (options.fetchModel ?? ((m: string) => fetchModelFiles(modelUrl(m))))(id);
      const mismatch = tokenizerMismatch(files, teacherFiles);
      if (mismatch) throw new Error(`distillation teacher_model ${JSON.stringify(id)}: ${mismatch}`);
      const teacher = await loadModel(rt, teacherFiles, { frozen: true });
      owned.push(teacher.model);
      distillModel = { model: teacher.model, formatPrompt: teacher.formatPrompt };
    }
    let judge = options.modelJudge;
    if (!judge) {
      const built = await buildJudge(rt, judgeChoice, {
        policyFiles: files,
        // Under LoRA the starting policy is the base with its adapters off: no second copy.
        startingPolicy: lora ? { model: loaded.model.withoutAdapters(), tokenizer: loaded.tokenizer, formatPrompt: loaded.formatPrompt } : undefined,
        fetchModel: options.fetchModel ?? ((id) => fetchModelFiles(modelUrl(id))),
        ...judgeKeySources(options.judgeApiKey),
        remoteModelJudge: options.remoteModelJudge,
        ...(judgeChoice.kind === 'probe'
          ? { probe: { examples: options.probe?.examples ?? [], onTrained: options.probe?.onTrained, rubric, rubricVersion: await rubricVersion(rubric), criteria: [...questionIds(rubric)] } }
          : {}),
      });
      judge = built.judge;
      releaseJudge = built.release;
    }
    // judge_external_fraction (src/rl/externalGrading.ts): the external judge, from the same sources; tests inject one.
    const external =
      options.externalJudge && config.judge_external_fraction > 0
        ? { grader: { judge: options.externalJudge, fraction: config.judge_external_fraction }, release: () => {} }
        : await buildExternalGrader(rt, config, { policyFiles: files, fetchModel: options.fetchModel ?? ((id) => fetchModelFiles(modelUrl(id))), ...judgeKeySources(options.judgeApiKey), remoteModelJudge: options.remoteModelJudge });
    const releaseOwnJudge = releaseJudge;
    releaseJudge = () => {
      releaseOwnJudge();
      external.release();
    };
    const version = await rubricVersion(rubric);
    // irt_ability: a resumed run goes on with the checkpoint's item table (or a fresh one, saying why).
    const irt = resumedIrtState(config, rubric.criteria.length, version, options.resume);
    // rubric_evolution: a resumed run goes on with the version its checkpoint was judging with.
    const evolved = await resumedEvolvedRubric(options.resume);
    // The black-box teacher: a resumed run goes on with the version its checkpoint had induced (src/rl/distill/blackBox.ts).
    const induced = config.distillation.teacher === 'black_box' ? await resumedInducedRubric(options.resume, { version }) : null;
    return {
      rt,
      model: loaded.model,
      reference,
      distillModel,
      emaTeacher,
      tokenizer: loaded.tokenizer,
      formatPrompt: loaded.formatPrompt,
      rubric: evolved?.rubric ?? induced?.rubric ?? rubric,
      rubricVersion: evolved?.version ?? induced?.version ?? version,
      // rubric_evolution rare / online_rubrics propose criteria through a judge that writes text.
      rubricGenerator: judgeGenerator(judge),
      irt: irt.state,
      irtResumeNote: irt.note,
      // The black-box teacher induces its criteria onto the experiment's rubric (src/rl/distill/blackBox.ts).
      blackBox: blackBoxState(config, { rubric, version }, options.teacherApiKey ?? (typeof options.judgeApiKey === 'object' ? options.judgeApiKey : undefined), induced),
      heldOut: heldOutRubric ? { rubric: heldOutRubric, version: await rubricVersion(heldOutRubric) } : null,
      // Evidence-required credit wraps the trained rubric's judge; the held-out (gold) rubric is judged by the bare judge.
      // The judge design (judge_verdict, judge_scope) travels with every request, to a judge worker too.
      ...evidenceJudges(judge && designedJudge(judge, judgeDesignOf(config)), config),
      // A pairwise score depends on the rollout's group: one verdict per (prompt, completion, criterion) cannot be kept.
      judgeCache: config.judge_verdict === 'pairwise' ? undefined : (options.judgeCache ?? new JudgeCache()),
      judgeBias,
      externalGrader: external.grader,
      config,
      releaseJudge,
    };
  } catch (err) {
    for (const m of owned) m.params.destroy();
    releaseJudge();
    throw err;
  }
}

/** The files of a full run's KL reference: the starting model, or the drifted one a checkpoint saved. */
function referenceFiles(config: GrpoConfig, files: ModelFiles, resume: CheckpointFiles | undefined): ModelFiles {
  if (!resume || !config.sync_ref_model) return files;
  const saved = checkpointReferenceFiles(resume);
  if (saved) return { ...saved, tokenizerJson: files.tokenizerJson, tokenizerConfig: files.tokenizerConfig };
  const step = parseTrainerState(resume['trainer_state.json']).global_step;
  if (referenceDrifted(config, step)) {
    throw new Error(`this checkpoint (step ${step}) has no ref_model.safetensors, but sync_ref_model had already mixed the policy into the reference by then: resuming from it would restart from the starting model's reference. Start the run again, or resume from a checkpoint saved with its reference`);
  }
  return files;
}

/** The ema teacher's files: a copy of the policy's as the run starts, the averaged ones a checkpoint saved on resume (their shapes checked). */
function emaTeacherFiles(policyFiles: ModelFiles, files: ModelFiles, resume: CheckpointFiles | undefined): ModelFiles {
  if (!resume) return { ...policyFiles, optimizer: undefined };
  const saved = checkpointEmaFiles(resume);
  if (saved) return { ...saved, tokenizerJson: files.tokenizerJson, tokenizerConfig: files.tokenizerConfig };
  const step = parseTrainerState(resume['trainer_state.json']).global_step;
  // Before the first step the average is the policy itself: nothing was lost.
  if (step > 0) {
    throw new Error(`this checkpoint (step ${step}) has no ema_model.safetensors, but the ema teacher had already averaged ${step} step(s) of the policy by then: resuming from it would restart the teacher from the policy's weights. Start the run again, or resume from a checkpoint saved with its ema teacher`);
  }
  return { ...policyFiles, optimizer: undefined };
}

/** Frees the context's GPU weights: the policy, a separately loaded KL reference and an engine judge. */
export function releaseGrpoContext(ctx: GrpoContext): void {
  ctx.model.params.destroy();
  // Under LoRA the reference is a view of the policy's own buffers (already freed above).
  if (ctx.reference && ctx.reference.params !== ctx.model.params) ctx.reference.params.destroy();
  ctx.distillModel?.model.params.destroy();
  ctx.emaTeacher?.params.destroy();
  ctx.releaseJudge?.();
}
