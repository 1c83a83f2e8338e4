// Rubric induction from teacher-vs-student contrasts (ROPD, seed 000 #15 / 002 A001): a black-box
// teacher gives no logits, only answers; for each prompt, the rubric writer (a judge model, local
// or remote: any `Complete`) sees the teacher's answers as the good responses and the student's
// own samples as the bad ones (generate.ts contrastiveRubric, the rubric lab's contrastive mode)
// and writes the criteria that separate them. The prompts' criteria are pooled (generateMerge.ts
// with one vote: near-duplicates across prompts become one criterion) and appended to the base
// rubric (ids made unique). The result is a new rubric version, returned with its provenance —
// which teacher, which judge, which prompts, from which base version — so the store can keep them
// together. Any malformed reply is a GenerationError naming the prompt: nothing is induced then.
import { contrastiveRubric, DEFAULT_MAX_GENERATED, type Complete } from './generate';
import { GenerationError } from './generateParse';
import { mergeRubrics } from './generateMerge';
import { MAX_CRITERIA, parseRubric, type Criterion, type Rubric } from './schema';
import { rubricVersion } from './version';

export interface TeacherContrast {
  prompt: string;
  /** The teacher's responses (the good side). */
  teacher: readonly string[];
  /** The student's samples (the bad side). */
  student: readonly string[];
}

/** Where an induced rubric version came from (kept with it in the store and in the step's metrics). */
export interface InductionProvenance {
  kind: 'teacher_contrast';
  /** The teacher's description (stored responses, or the remote model and endpoint; never a key). */
  teacher: string;
  /** The rubric writer's name (the judge model). */
  judge: string;
  /** The version the induced criteria were appended to. */
  base_version: string;
  /** The prompts contrasted, in order. */
  prompts: string[];
  /** The induced criteria's ids in the new version. */
  criteria: string[];
  /** The step whose samples were the student's side (null: outside a run). */
  step: number | null;
}

export interface InductionResult {
  rubric: Rubric;
  version: string;
  provenance: InductionProvenance;
}

export interface InductionOptions {
  teacher: string;
  judge: string;
  /** Criteria asked per prompt (default 6). */
  maxCriteria?: number;
  step?: number | null;
  signal?: AbortSignal;
}

const excerpt = (s: string) => JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);

/**
 * The base rubric plus the criteria induced from the contrasts. Contrasts without a teacher or a
 * student response are skipped; none left is a RangeError. Throws GenerationError (rubric
 * unchanged) on a malformed reply or when the result would not be a valid rubric.
 */
export async function induceTeacherRubric(complete: Complete, base: Rubric, baseVersion: string, contrasts: readonly TeacherContrast[], options: InductionOptions): Promise<InductionResult> {
  const usable = contrasts.filter((c) => c.teacher.some((t) => t.trim() !== '') && c.student.some((s) => s.trim() !== ''));
  if (usable.length === 0) throw new RangeError('no prompt has both a teacher response and a student response to contrast');
  const samples: Rubric[] = [];
  for (const c of usable) {
    try {
      const good = c.teacher.filter((t) => t.trim() !== '');
      const bad = c.student.filter((s) => s.trim() !== '');
      samples.push(await contrastiveRubric(complete, c.prompt, good, bad, { maxCriteria: options.maxCriteria ?? DEFAULT_MAX_GENERATED, signal: options.signal }));
    } catch (e) {
      if (e instanceof GenerationError) throw new GenerationError(e.problems.map((p) => `prompt ${excerpt(c.prompt)}: ${p}`), e.output);
      throw e;
    }
  }
  // One vote keeps every proposal; near-duplicates from different prompts merge into one.
  const pooled = samples.length === 1 ? samples[0].criteria : mergeRubrics(samples, { minVotes: 1 }).rubric.criteria;
  const used = new Set(base.criteria.map((c) => c.id));
  const induced: Criterion[] = pooled.map((c) => {
    let id = c.id;
    for (let n = 2; used.has(id); n++) id = `${c.id.slice(0, 60)}_${n}`;
    used.add(id);
    return { ...c, id };
  });
  if (base.criteria.length + induced.length > MAX_CRITERIA) {
    throw new GenerationError([`the rubric would have ${base.criteria.length + induced.length} criteria, more than ${MAX_CRITERIA}`], '');
  }
  let rubric: Rubric;
  try {
    rubric = parseRubric({ name: base.name, version: `teacher-induced${options.step === undefined || options.step === null ? '' : ` at step ${options.step}`}`, criteria: [...base.criteria, ...induced] });
  } catch (e) {
    throw new GenerationError([`the induced rubric is not valid: ${(e as Error).message}`], '');
  }
  return {
    rubric,
    version: await rubricVersion(rubric),
    provenance: {
      kind: 'teacher_contrast',
      teacher: options.teacher,
      judge: options.judge,
      base_version: baseVersion,
      prompts: usable.map((c) => c.prompt),
      criteria: induced.map((c) => c.id),
      step: options.step ?? null,
    },
  };
}
