// A model on our engine as a text writer: the generation `Complete` (src/rubric/generate.ts) that
// rubric_evolution's rare / online_rubrics proposals and the black-box teacher's induction ask
// for criteria, so an engine judge (self, or a model) can write them, not only a remote endpoint.
// Sampling is greedy (temperature 0) and the prompt is fitted to the model's context by
// engineComplete; the reply is parsed strictly by the caller either way.
import { generate } from '../model/generate';
import type { LoadedModel } from '../model/load';
import type { Complete } from '../rubric/generate';
import { engineComplete, type EngineModelParts, type SampleIds } from './engineComplete';

type EngineModel = Pick<LoadedModel, 'model' | 'tokenizer' | 'formatPrompt'>;

/** What engineComplete needs to know of a loaded model. */
export const completionParts = (loaded: EngineModel): EngineModelParts => ({
  formatPrompt: loaded.formatPrompt,
  tokenizer: loaded.tokenizer,
  contextLength: loaded.model.config.maxPositions,
});

/** One reply sampled by the engine (top-k and top-p off: greedy at temperature 0). */
export const sampleOne = (loaded: EngineModel): SampleIds => async (prompt, s) => {
  const out = await generate(loaded.model, [prompt], { max_completion_length: s.maxNew, temperature: s.temperature, top_k: 0, top_p: 1, seed: s.seed }, { eosTokenId: loaded.tokenizer.eosTokenId });
  return { ids: out.completions[0] };
};

/** The model's reply text to a generation request. */
export function engineWriter(loaded: EngineModel): Complete {
  return async (messages) => (await engineComplete(completionParts(loaded), sampleOne(loaded), messages)).text;
}
