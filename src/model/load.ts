// Loads a model directory in the Hugging Face layout (config.json, model.safetensors, and a
// tokenizer) into the engine. The embedded default ships in public/models/; Hub models use the
// same files. A config.json may carry a "rubric_playground" block for models the Hub does not
// describe: {"tokenizer": "byte", "prompt_template": "Instruction: {prompt}\nResponse: "}.
import type { GpuRuntime } from '../gpu/runtime';
import { configFromHf, type ModelConfig } from './config';
import { HfTokenizer } from './hfTokenizer';
import { withEngineTensorNames } from './hub/checkpointNames';
import { readModelWeights, type ShardedWeights } from './hub/shards';
import { ParameterStore } from './parameters';
import { readSafetensors } from './safetensors';
import { ByteTokenizer, type Tokenizer } from './tokenizer';
import { Transformer } from './transformer';
import { fromHfTensors } from './weights';

export interface ModelFiles {
  config: Record<string, unknown>;
  /** model.safetensors, or the shards of a sharded checkpoint with their index (src/model/hub). */
  weights: ArrayBuffer | ShardedWeights;
  /** AdamW moments (optimizer.safetensors of a checkpoint), to resume training exactly. */
  optimizer?: ArrayBuffer;
  tokenizerJson?: Record<string, unknown>;
  tokenizerConfig?: Record<string, unknown>;
}

export interface LoadedModel {
  config: ModelConfig;
  model: Transformer;
  tokenizer: Tokenizer;
  /** Prompt text → token ids as the model expects them (BOS, template or chat template). */
  formatPrompt: (text: string) => number[];
}

export async function fetchOk(url: string, what: string): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url);
  } catch (err) {
    throw new Error(`could not fetch ${what} from ${url} (${(err as Error).message})`);
  }
  if (!res.ok) throw new Error(`could not fetch ${what} from ${url}: HTTP ${res.status}`);
  // A single-page-app server answers a missing file with index.html and status 200.
  if ((res.headers.get('content-type') ?? '').includes('text/html')) {
    throw new Error(`${what} is missing at ${url} (the server sent an HTML page instead)`);
  }
  return res;
}

/** Fetches config.json, model.safetensors and, when present, the tokenizer files. */
export async function fetchModelFiles(baseUrl: string): Promise<ModelFiles> {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  const config = await (await fetchOk(`${base}config.json`, 'config.json')).json();
  const weights = await (await fetchOk(`${base}model.safetensors`, 'model.safetensors')).arrayBuffer();
  const extras = (config as { rubric_playground?: { tokenizer?: string } }).rubric_playground;
  if (extras?.tokenizer === 'byte') return { config, weights };
  const tokenizerJson = await (await fetchOk(`${base}tokenizer.json`, 'tokenizer.json')).json();
  const tokenizerConfig = await (await fetchOk(`${base}tokenizer_config.json`, 'tokenizer_config.json')).json();
  return { config, weights, tokenizerJson, tokenizerConfig };
}

/** Builds a prompt formatter from a "Instruction: {prompt}\nResponse: " style template. */
function templateFormatter(tokenizer: Tokenizer, template: string): (text: string) => number[] {
  if (!template.includes('{prompt}')) throw new Error('rubric_playground.prompt_template must contain {prompt}');
  return (text) => [...(tokenizer.bosTokenId !== null ? [tokenizer.bosTokenId] : []), ...tokenizer.encode(template.replace('{prompt}', text))];
}

/** `frozen`: upload the weights without gradient buffers (LoRA's base, a judge, a KL reference). */
export async function loadModel(rt: GpuRuntime, files: ModelFiles, options: { frozen?: boolean } = {}): Promise<LoadedModel> {
  const config = configFromHf(files.config);
  const extras = (files.config as { rubric_playground?: { tokenizer?: string; prompt_template?: string } }).rubric_playground ?? {};
  let tokenizer: Tokenizer;
  let formatPrompt: (text: string) => number[];
  if (extras.tokenizer === 'byte') {
    tokenizer = new ByteTokenizer();
    if (config.vocabSize !== tokenizer.vocabSize) {
      throw new Error(`config.json: a byte tokenizer needs vocab_size ${tokenizer.vocabSize}, got ${config.vocabSize}`);
    }
    formatPrompt = templateFormatter(tokenizer, extras.prompt_template ?? '{prompt}');
  } else {
    if (!files.tokenizerJson || !files.tokenizerConfig) throw new Error('the model has no tokenizer.json / tokenizer_config.json');
    const hf = await HfTokenizer.fromJson(files.tokenizerJson, files.tokenizerConfig, config.vocabSize);
    tokenizer = hf;
    const hasChatTemplate = typeof files.tokenizerConfig.chat_template === 'string';
    formatPrompt = extras.prompt_template
      ? templateFormatter(tokenizer, extras.prompt_template)
      : hasChatTemplate
        ? (text) => hf.encode(hf.chatPrompt(text))
        : (text) => [...(tokenizer.bosTokenId !== null ? [tokenizer.bosTokenId] : []), ...hf.encode(text)];
  }
  const weights = withEngineTensorNames(config, readModelWeights(files.weights));
  const params = ParameterStore.create(rt, config, fromHfTensors(config, weights), options);
  if (files.optimizer) {
    try {
      params.loadMoments(readSafetensors(files.optimizer, 'optimizer.safetensors').tensors);
    } catch (err) {
      params.destroy();
      throw err;
    }
  }
  return { config, model: new Transformer(rt, config, params), tokenizer, formatPrompt };
}

export { DEFAULT_MODEL_ID, EMBEDDED_MODELS, modelUrl } from './registry';
