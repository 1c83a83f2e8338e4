// The glossary: every TRL term the page shows (chart titles and legends, lesson texts, the loss
// types) in one plain-language line, with the lesson that shows it where one does. Settings keep
// their own help (settingsCatalog.ts); entries here for a setting give the one-line idea and the
// lesson, not a second copy of that help. The words are the page's: `shown_as` lists how a chart
// writes the term, so chart titles, legends and lesson texts resolve to the same entry.

export type GlossaryKind = 'metric' | 'setting' | 'loss type' | 'idea';

export interface GlossaryEntry {
  /** The TRL name where TRL has one (frac_reward_zero_std, epsilon_high, dapo), else the page's word. */
  term: string;
  kind: GlossaryKind;
  /** One line, plain language. */
  definition: string;
  /** The lesson (id in lessons.ts) that shows the term, if one does. */
  lesson?: string;
  /** Other ways the page writes it: chart titles and legend labels (compared case-insensitively). */
  shown_as?: string[];
}

export const GLOSSARY: readonly GlossaryEntry[] = [
  // ---- What the charts show ----
  { term: 'reward', kind: 'metric', definition: 'The rubric\'s score for an answer; the chart shows its mean over the step\'s answers.', lesson: 'grpo-basics', shown_as: ['Reward (mean ± std)', 'reward mean'] },
  { term: 'reward_std', kind: 'metric', definition: 'How spread out the step\'s rewards are (standard deviation): the shaded band around the mean.', lesson: 'grpo-basics', shown_as: ['mean − std', 'mean + std'] },
  { term: 'held-out reward', kind: 'metric', definition: 'The score from a second, clean rubric that is never trained on: a check on what the trained reward misses.', lesson: 'reward-hacking' },
  { term: 'criterion pass rate', kind: 'metric', definition: 'For each rubric criterion, the share of answers that meet it.', lesson: 'grpo-basics', shown_as: ['Criterion pass rates'] },
  { term: 'strict completion rate', kind: 'metric', definition: 'The share of answers that meet every required criterion and no pitfall.', shown_as: ['Strict completion rate', 'strict completion'] },
  { term: 'frac_reward_zero_std', kind: 'metric', definition: 'The share of groups where every answer got the same reward: those groups teach nothing.', lesson: 'zero-variance' },
  { term: 'kl', kind: 'metric', definition: 'How far the trained model has moved from the reference model, per token; only measured when beta > 0.', shown_as: ['KL to the reference'] },
  { term: 'entropy', kind: 'metric', definition: 'How unsure the model is about its next token, on average: low entropy means it repeats itself.', lesson: 'clipping' },
  { term: 'clip ratio', kind: 'metric', definition: 'The share of tokens whose probability change was cut off by the clip range this step.', lesson: 'clipping', shown_as: ['Clip ratios'] },
  { term: 'clip_ratio_low', kind: 'metric', definition: 'The share of tokens with a negative advantage held at the lower clip bound (1 − epsilon).', lesson: 'clipping' },
  { term: 'clip_ratio_high', kind: 'metric', definition: 'The share of tokens with a positive advantage held at the upper clip bound (1 + epsilon_high).', lesson: 'clipping' },
  { term: 'clip_ratio_region', kind: 'metric', definition: 'The share of tokens clipped at either bound.', lesson: 'clipping' },
  { term: 'completion length', kind: 'metric', definition: 'How many tokens the answers have: the mean, shortest and longest of the step.', shown_as: ['Completion length'] },
  { term: 'tokens per second', kind: 'metric', definition: 'Speed of this GPU: tokens sampled per second, and tokens trained on per second.', shown_as: ['Tokens per second'] },
  { term: 'unexplored criteria', kind: 'metric', definition: 'Criteria that no answer in a group meets, so the group cannot learn them (CriPO).', lesson: 'unexplored-criteria', shown_as: ['Unexplored and suppressed criteria (CriPO)', 'unexplored (no completion meets it)'] },
  { term: 'suppressed criteria', kind: 'metric', definition: 'Criteria an answer meets while its advantage is negative, so training pushes them down (CriPO).', lesson: 'unexplored-criteria', shown_as: ['suppressed (met, negative advantage)'] },
  { term: 'dynamic sampling', kind: 'metric', definition: 'Sampling more answers to replace groups that all got the same reward; the chart counts the extra tokens.', shown_as: ['Dynamic sampling cost', 'extra (resampling)', 'all sampled'] },
  { term: 'rubric scaffolding', kind: 'metric', definition: 'Showing the rubric in the prompt for some answers, which are then trained as if it was not there.', lesson: 'unexplored-criteria', shown_as: ['Rubric scaffolding', 'scaffold probability'] },
  { term: 'distillation divergence', kind: 'metric', definition: 'How far the model\'s next-token distribution is from the teacher\'s, per token, on the model\'s own answers; distillation lowers it.', shown_as: ['Distillation: divergence and agreement', 'divergence'] },
  { term: 'top-1 agreement', kind: 'metric', definition: 'The share of distilled tokens where the teacher\'s and the model\'s most likely next token are the same.' },
  { term: 'retained share', kind: 'metric', definition: 'The share of completion tokens the distillation term trains on, after the entropy and token selection.' },
  { term: 'distillation schedule', kind: 'metric', definition: 'Which phase each step was in (distillation, rejection-sampling SFT or GRPO) and whether the model or the teacher sampled it.', shown_as: ['Schedule: phases and who sampled'] },
  { term: 'SFT rollouts kept', kind: 'metric', definition: 'RuFT\'s warm start: the rollouts whose rubric reward passed min_reward, trained on as SFT data that step.' },
  { term: 'on-policy batch', kind: 'metric', definition: 'GKD\'s lmbda: 1 when the model sampled the step\'s batch itself, 0 when the teacher sampled it.' },
  { term: 'distill_then_rl', kind: 'idea', definition: 'A distillation schedule: the model learns from the teacher alone for distill_steps steps, with no judge, then trains with GRPO on the rubric.', lesson: 'distill-then-rl' },
  { term: 'log-prob gap', kind: 'metric', definition: 'How much likelier a scaffolded answer is with the rubric in the prompt than without it.' },

  // ---- Ideas ----
  { term: 'group', kind: 'idea', definition: 'The num_generations answers sampled for one prompt, compared with each other.', lesson: 'grpo-basics' },
  { term: 'advantage', kind: 'idea', definition: 'How much better an answer scored than the others in its group: positive answers are made more likely, negative ones less.', lesson: 'grpo-basics' },
  { term: 'ratio', kind: 'idea', definition: 'How much likelier the updated model makes a token than the model that sampled it.', lesson: 'clipping' },
  { term: 'reference model', kind: 'idea', definition: 'A frozen copy of the starting model that the kl metric and beta measure distance from.' },
  { term: 'reward hacking', kind: 'idea', definition: 'Raising the reward by exploiting a flaw in the judge instead of getting better at what was wanted.', lesson: 'reward-hacking' },
  { term: 'essential criterion', kind: 'idea', definition: 'A criterion an answer must meet; with essential gating, failing one caps the reward at gate_cap.', lesson: 'reward-hacking-gated' },

  // ---- Settings (their full help is beside each setting) ----
  { term: 'num_generations', kind: 'setting', definition: 'How many answers are sampled per prompt: the size of a group.', lesson: 'grpo-basics' },
  { term: 'beta', kind: 'setting', definition: 'How strongly training is held close to the reference model; 0 turns the KL penalty off.' },
  { term: 'epsilon', kind: 'setting', definition: 'How far down a token\'s probability ratio may move in one update before it is clipped (1 − epsilon).', lesson: 'clipping' },
  { term: 'epsilon_high', kind: 'setting', definition: 'How far up the ratio may move before it is clipped (1 + epsilon_high); empty means the same as epsilon.', lesson: 'clipping' },
  { term: 'num_iterations', kind: 'setting', definition: 'How many updates each batch of answers is used for; above 1 the ratio can move away from 1.', lesson: 'clipping' },
  { term: 'scale_rewards', kind: 'setting', definition: 'Whether advantages are divided by the reward spread of the group, of the batch, or not at all.', lesson: 'zero-variance' },
  { term: 'loss_type', kind: 'setting', definition: 'How the per-token losses of a batch are averaged into one number (dapo, grpo, dr_grpo, ...).' },
  { term: 'judge_external_fraction', kind: 'setting', definition: 'The share of each step\'s groups that an external judge also grades; its verdicts replace the run judge\'s there, anchoring a self-judge.' },
  { term: 'leniency', kind: 'metric', definition: 'How much more often the run\'s judge passes an answer than a reference judge on the same answers (its pass rate minus theirs).' },
  { term: 'gate_cap', kind: 'setting', definition: 'The most reward an answer can get when it fails an essential criterion (essential gating).', lesson: 'reward-hacking-gated' },
  { term: 'black_box', kind: 'setting', definition: 'A distillation teacher seen only through its text answers: a judge model writes criteria that tell them from the model\'s, and that rubric scores the model.' },
  { term: 'teacher_responses', kind: 'setting', definition: 'The black_box teacher\'s answers as a file (JSON or JSONL, prompt and response per entry), carried with the experiment.' },
  { term: 'teacher_model', kind: 'setting', definition: 'The distillation teacher as another model (an embedded or Hub id) with the student\'s tokenizer; it only reads the student\'s answers.', lesson: 'distill-teacher' },
  { term: 'teacher_endpoint', kind: 'setting', definition: 'The black_box teacher as an OpenAI-compatible endpoint (URL and model), asked once per prompt; its key stays in the page.' },
  { term: 'position bias', kind: 'metric', definition: 'A pairwise judge\'s lean towards a slot, each pair asked in both orders: (first-slot wins − second-slot wins) / comparisons; 0 when the slot does not matter.', shown_as: ['Position bias (pairwise mode)'] },
  { term: 'dropout_p', kind: 'setting', definition: 'The chance that each criterion is left out of a step\'s reward (Rubric Dropout).', lesson: 'reward-hacking-dropout' },
  { term: 'rubric_evolution', kind: 'setting', definition: 'How the rubric may change mid-run (prune, rare, online_rubrics): each change is a new version, applied only after a check on stored answers.', lesson: 'rubric-evolution' },
  { term: 'rubric_evolution_writer', kind: 'setting', definition: 'Who writes rare\'s flaw checks: the judge\'s model, or a catalogue of rule-based checks (no model; the most discriminative on recent answers).', lesson: 'rubric-evolution' },

  // ---- Loss types (the values of loss_type) ----
  { term: 'dapo', kind: 'loss type', definition: 'Averages the loss over every token of the batch, so long answers count per token (DAPO; TRL\'s default).' },
  { term: 'grpo', kind: 'loss type', definition: 'Averages each answer\'s tokens first, then the answers: every answer counts the same whatever its length (the original GRPO).' },
  { term: 'bnpo', kind: 'loss type', definition: 'Averages over the tokens of the local batch, like dapo within one batch.' },
  { term: 'dr_grpo', kind: 'loss type', definition: 'Divides the summed loss by a fixed length (max_completion_length), removing GRPO\'s length bias (Dr. GRPO).' },
  { term: 'cispo', kind: 'loss type', definition: 'Clips the importance weight instead of the update, so every token still gets a gradient (CISPO).' },
  { term: 'sapo', kind: 'loss type', definition: 'Replaces the hard clip with a smooth gate around ratio 1 (SAPO).' },
];

const norm = (s: string) => s.trim().toLowerCase();
const BY_WORD = new Map<string, GlossaryEntry>();
for (const e of GLOSSARY) for (const w of [e.term, ...(e.shown_as ?? [])]) BY_WORD.set(norm(w), e);

/** The entry the page's word (a term, a chart title or a legend label) stands for. */
export function glossaryEntry(word: string): GlossaryEntry | undefined {
  return BY_WORD.get(norm(word));
}

/** A chart's entries: its title's and its legend labels', each once, title first. */
export function chartTerms(title: string, labels: readonly string[]): GlossaryEntry[] {
  const found = [title, ...labels].map(glossaryEntry).filter((e): e is GlossaryEntry => e !== undefined);
  return [...new Set(found)];
}

/** A tooltip's text for a chart: "term: definition" for each of its entries. */
export function chartTipText(title: string, labels: readonly string[]): string | null {
  const entries = chartTerms(title, labels);
  return entries.length ? entries.map((e) => `${e.term}: ${e.definition}`).join(' · ') : null;
}
