// The lessons as a path: the order a visitor takes them in (previous / next, "Lesson k of n") and
// one "Try this" per lesson: an action to take in the page, never a promised result (what each
// lesson shows is its own guidance's claim, measured elsewhere).
import { lessonById, type Lesson } from './lessons';

/** Every lesson once, in the order of issue 5's four lessons, then issue 10's two; variants follow the lesson they vary. */
export const LESSON_PATH: readonly string[] = [
  'grpo-basics',
  'reward-hacking',
  'reward-hacking-gated',
  'reward-hacking-dropout',
  'hacking-onset',
  'vacuous-credit',
  'zero-variance',
  'zero-variance-none',
  'clipping',
  'clipping-symmetric',
  // Issue 10's seed methods, after the four basics.
  'token-credit',
  'unexplored-criteria',
  // Issue 11's distillation.
  'distill-teacher',
  'distill-self-rubric',
  'distill-then-rl',
  // Issue 12's rubric lab.
  'rubric-quality',
  'rubric-evolution',
  'rubric-evolution-off',
];

/** One action per lesson, using only controls the lesson leaves visible. */
export const TRY_THIS: Readonly<Record<string, string>> = {
  'grpo-basics': 'Train 10 steps, pause, and find an answer with a negative advantage in the rollout inspector: which criteria did it miss?',
  'reward-hacking': 'Train 8 steps, then look through the rollout inspector for verdicts marked "biased" and count the words of the answers that got them.',
  'reward-hacking-gated': 'Train 8 steps, then press "Run the other variant" for the ungated lesson and read the two reward curves side by side.',
  'reward-hacking-dropout': 'Set dropout_p to 0.3, train 8 steps, then set it to 0.7 and train 8 more as a new run.',
  'vacuous-credit': 'Train 3 steps, pause, and in the rollout inspector find a "vivid" pass marked "biased": which describing word did that answer use? Then open the rubric check and read what the adversarial probe found.',
  'hacking-onset': 'Train 8 steps, then find the onset marker on the proxy vs gold chart and read the per-criterion gap below it at that step.',
  'zero-variance': 'Train 20 steps and read frac_reward_zero_std at the last step; then set num_generations to 8 and train again.',
  'zero-variance-none': 'Train 10 steps, pause, and in the rollout inspector find a group where only one answer met both criteria: read its advantage.',
  clipping: 'Train 20 steps watching the Clip ratios chart, then set num_iterations to 1 and train again.',
  'clipping-symmetric': 'Train 20 steps, then set epsilon to 0.1 and train again, watching clip_ratio_low and clip_ratio_high.',
  'token-credit': 'Train 2 steps, pause, and in the rollout inspector colour the tokens by span credit, then by CoRT contrast, then by advantage × weight: which tokens did each one favour?',
  'unexplored-criteria': 'Train 5 steps, then set scaffold_fraction to 0 and train 5 more as a new run, reading the unexplored counts of both.',
  'distill-teacher': 'Train 4 steps watching the distillation chart and the held-out chart, then open the rollout inspector and colour the tokens by distillation divergence: which letter did the teacher disagree with most?',
  'distill-self-rubric': 'Train 4 steps, then set distillation.beta to 1 (reverse KL) and train 4 more as a new run, reading the divergence of both.',
  'distill-then-rl': 'Train 6 steps, then open "Learn from a teacher" and train 6 steps as a new run: read the two held-out charts side by side.',
  'rubric-quality': 'Open the rubric check under the rubric editor and read its leakage finding; train 4 steps; then press "Measure rubric" on the run in Saved runs and find the saturated criterion and the redundant pair.',
  'rubric-evolution': 'Train 6 steps, then read the decision in the rubric evolution log and open the rollout inspector on step 4: which answers met the new flaw check? Then set rubric_evolution_window to 1 and train again as a new run.',
  'rubric-evolution-off': 'Train 6 steps, then press "Run the other variant" for the evolving lesson and read the two held-out charts side by side.',
};

export interface PathPlace {
  /** 1-based place on the path. */
  number: number;
  total: number;
  previous: Lesson | null;
  next: Lesson | null;
}

/** Where a lesson is on the path; null for a lesson the path does not know (a link's own lesson). */
export function placeOnPath(id: string): PathPlace | null {
  const i = LESSON_PATH.indexOf(id);
  if (i < 0) return null;
  const at = (j: number) => (j >= 0 && j < LESSON_PATH.length ? (lessonById(LESSON_PATH[j]) ?? null) : null);
  return { number: i + 1, total: LESSON_PATH.length, previous: at(i - 1), next: at(i + 1) };
}

/** The lessons in path order. */
export function lessonsInOrder(): Lesson[] {
  return LESSON_PATH.map((id) => lessonById(id)).filter((l): l is Lesson => l !== undefined);
}

export function tryThis(id: string): string | null {
  return TRY_THIS[id] ?? null;
}
