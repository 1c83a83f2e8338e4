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
        { id: 'no_caps_shouting', text: 'Does not shout in capitals', weight: -1, tier: 'optional', rule: { kind: 'all_caps' } },
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
      save_steps: 10,
      seed: 42,
    },
  },
};

export const PRESETS: Preset[] = [FIRST_VISIT];
