// The one path from "somewhere that has a model's files" to ModelFiles: the Hub (network +
// cache) and files the user picked both go through here, so they behave the same. Reads
// config.json first and checks it, so an unsupported model fails before any weights download.
import { configFromHf, ModelConfigError } from '../config';
import type { ModelFiles } from '../load';
import { MissingFileError } from './errors';
import { checkShardCoverage, INDEX_FILE, parseShardIndex, SINGLE_FILE, type ShardedWeights } from './shards';

export interface ModelFileSource {
  /** Where the files come from, for messages ("https://huggingface.co/owner/name@main", "the picked files"). */
  where: string;
  /** A file's bytes; a MissingFileError when the source does not have it. */
  read(file: string): Promise<ArrayBuffer>;
  /** Files about to be read (shards), so progress can total them up front. */
  expect?(files: string[]): void;
}

const CHAT_TEMPLATE_FILE = 'chat_template.jinja';

async function readOptional(source: ModelFileSource, file: string): Promise<ArrayBuffer | null> {
  try {
    return await source.read(file);
  } catch (err) {
    if (err instanceof MissingFileError) return null;
    throw err;
  }
}

async function readRequired(source: ModelFileSource, file: string, why: string): Promise<ArrayBuffer> {
  try {
    return await source.read(file);
  } catch (err) {
    if (err instanceof MissingFileError) throw new MissingFileError(file, `${err.reason} (${why}; looked in ${source.where})`);
    throw err;
  }
}

function parseJson(bytes: ArrayBuffer, file: string, where: string): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch (err) {
    throw new Error(`${file} from ${where} is not valid JSON (${(err as Error).message})`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error(`${file} from ${where} is not a JSON object`);
  return json as Record<string, unknown>;
}

/** Reads config, tokenizer and weights (one file or shards) from `source`. */
export async function assembleModelFiles(source: ModelFileSource): Promise<ModelFiles> {
  const config = parseJson(await readRequired(source, 'config.json', 'every model needs it'), 'config.json', source.where);
  try {
    configFromHf(config);
  } catch (err) {
    if (err instanceof ModelConfigError) throw new ModelConfigError(`${source.where}: ${err.message}`);
    throw err;
  }
  const extras = (config as { rubric_playground?: { tokenizer?: unknown } }).rubric_playground;
  const byteTokenizer = extras?.tokenizer === 'byte';
  let tokenizerJson: Record<string, unknown> | undefined;
  let tokenizerConfig: Record<string, unknown> | undefined;
  if (!byteTokenizer) {
    const why = 'the tokenizer needs it (only tokenizer.json "fast" tokenizers load, not vocab.json + merges.txt alone)';
    tokenizerJson = parseJson(await readRequired(source, 'tokenizer.json', why), 'tokenizer.json', source.where);
    tokenizerConfig = parseJson(await readRequired(source, 'tokenizer_config.json', 'the tokenizer needs it'), 'tokenizer_config.json', source.where);
    // Newer repositories keep the chat template in its own file.
    if (tokenizerConfig.chat_template === undefined) {
      const template = await readOptional(source, CHAT_TEMPLATE_FILE);
      if (template) tokenizerConfig = { ...tokenizerConfig, chat_template: new TextDecoder().decode(template) };
    }
  }
  return { config, weights: await readWeights(source), tokenizerJson, tokenizerConfig };
}

async function readWeights(source: ModelFileSource): Promise<ArrayBuffer | ShardedWeights> {
  const single = await readOptional(source, SINGLE_FILE);
  if (single) return single;
  const indexBytes = await readOptional(source, INDEX_FILE);
  if (!indexBytes) {
    throw new MissingFileError(
      SINGLE_FILE,
      `${source.where} has neither ${SINGLE_FILE} nor ${INDEX_FILE}; only safetensors checkpoints load (convert a pytorch_model.bin first)`,
    );
  }
  const index = parseShardIndex(parseJson(indexBytes, INDEX_FILE, source.where));
  source.expect?.(index.files);
  const shards: ShardedWeights['shards'] = [];
  for (const file of index.files) shards.push({ file, buffer: await readRequired(source, file, `${INDEX_FILE} lists it`) });
  const sharded = { index, shards };
  checkShardCoverage(sharded);
  return sharded;
}
