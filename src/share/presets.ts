// Ready-made experiments. The first is what a visitor sees on the first visit: the embedded
// model, short instructions, a rubric whose criteria it meets sometimes (RL needs that
// variance), and settings that move the reward chart within a few steps on a laptop GPU.
import { DEFAULT_MODEL_ID } from '../model/registry';
import type { Experiment } from '../rl/experiment';

export interface Preset {
  id: string;
  title: string;
  description: string;
  experiment: Experiment;
}

export const FIRST_VISIT: Preset = {
  id: 'first-visit',
  title: 'Short, curious answers',
  description:
    'Reward answers that stay under 20 words, end with a question and mention the topic. The rubric is met by some sampled answers and not others, so group advantages have signal from the first step.',
  experiment: {
    model: DEFAULT_MODEL_ID,
    prompts: [
      'Describe the sea.',
      'Write one sentence about cats.',
      'Tell me about the moon.',
      'Give a tip about cooking.',
      'Say something nice about rain.',
      'Explain how birds fly.',
      'Describe a city at night.',
      'Write one sentence about music.',
    ],
    rubric: {
      name: 'Short, curious answers',
      criteria: [
        { id: 'short', text: 'Uses at most 20 words', weight: 2, tier: 'essential', rule: { kind: 'length', unit: 'words', max: 20 } },
        { id: 'asks', text: 'Ends with a question', weight: 1, tier: 'important', rule: { kind: 'ends_with', text: '?' } },
        { id: 'you', text: 'Speaks to the reader ("you")', weight: 1, tier: 'optional', rule: { kind: 'contains', terms: ['you', 'your'], whole_word: true } },
        { id: 'no_caps_shouting', text: 'Shouts in capitals', weight: -1, tier: 'optional', rule: { kind: 'all_caps' } },
      ],
    },
    config: {
      num_generations: 8,
      generation_batch_size: 32,
      max_completion_length: 48,
      temperature: 1.0,
      learning_rate: 3e-4,
      beta: 0.0,
      loss_type: 'dapo',
      max_steps: 200,
      seed: 42,
    },
  },
};

/**
 * The quickest visible learning: reward answers that open with the word "The". The embedded
 * model does so about a third of the time, and only the first word matters, so completions can
 * be 4 tokens long and the reward climbs within a handful of steps even on a software GPU (the
 * learning test in test/browser/learning.test.ts trains exactly this preset).
 */
export const OPEN_WITH_THE: Preset = {
  id: 'open-with-the',
  title: 'Open with "The" (fast)',
  description:
    'One rule, first word "The". About a third of sampled answers meet it at the start, so every group has winners and losers; with 4-token completions a step is cheap and the reward rises within a few steps.',
  experiment: {
    model: DEFAULT_MODEL_ID,
    prompts: ['Describe the sea.', 'Tell me about the moon.', 'Give a tip about cooking.', 'Explain how birds fly.'],
    rubric: {
      name: 'Open with "The"',
      criteria: [{ id: 'opens_with_the', text: 'The first word is "The"', weight: 1, tier: 'essential', rule: { kind: 'regex', pattern: '^The\\b' } }],
    },
    config: {
      num_generations: 8,
      generation_batch_size: 32,
      max_completion_length: 4,
      temperature: 1.0,
      learning_rate: 2e-3,
      beta: 0.0,
      loss_type: 'dapo',
      max_steps: 30,
      seed: 7,
    },
  },
};

export const PRESETS: Preset[] = [FIRST_VISIT, OPEN_WITH_THE];
