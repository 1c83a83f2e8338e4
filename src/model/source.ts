// Where a model id's files come from, in one place: embedded and served ids from this page, "hf:"
// ids from the Hugging Face Hub (through the model cache, with progress and cancel), "local:" ids
// from files the user picked. Everything after this (loadModel) is the same for all of them.
import { fetchModelFiles, fetchOk, type ModelFiles } from './load';
import { fetchHubModelFiles, localFileSource, localModelFiles, ModelCache, normalizeEndpoint, HUB_ENDPOINT, type DownloadProgress, type PickedFile } from './hub';
import { hubSource } from './hub/hubSource';
import { ProgressTracker } from './hub/progress';
import { isHubModelId, isLocalModelId, modelUrl, parseHubModelId } from './registry';

export interface ModelSourceOptions {
  onProgress?: (progress: DownloadProgress) => void;
  signal?: AbortSignal;
  /** A Hub mirror or a server laid out like the Hub (default https://huggingface.co). */
  hubEndpoint?: string;
  /** The picked files of a "local:" model. */
  localFiles?: ArrayLike<PickedFile>;
}

function localFilesOf(modelId: string, options: ModelSourceOptions): ArrayLike<PickedFile> {
  if (!options.localFiles || options.localFiles.length === 0) {
    throw new Error(`the model "${modelId}" came from files on this computer: pick its folder (or files) again to load it`);
  }
  return options.localFiles;
}

/** Only a model's config.json (a few KB), e.g. to estimate memory before downloading weights. */
export async function fetchModelConfig(modelId: string, options: ModelSourceOptions = {}): Promise<Record<string, unknown>> {
  let text: string;
  if (isLocalModelId(modelId)) {
    text = new TextDecoder().decode(await localFileSource(localFilesOf(modelId, options)).read('config.json'));
  } else {
    if (isHubModelId(modelId)) {
      // Through the model cache: a downloaded model's estimate works offline and costs no request.
      const source = hubSource({
        ref: parseHubModelId(modelId),
        endpoint: normalizeEndpoint(options.hubEndpoint ?? HUB_ENDPOINT),
        cache: await ModelCache.open(),
        tracker: new ProgressTracker(undefined),
        signal: options.signal,
      });
      text = new TextDecoder().decode(await source.read('config.json'));
    } else {
      const base = modelUrl(modelId);
      text = await (await fetchOk(`${base.endsWith('/') ? base : `${base}/`}config.json`, 'config.json')).text();
    }
  }
  try {
    const json: unknown = JSON.parse(text);
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error('not a JSON object');
    return json as Record<string, unknown>;
  } catch (err) {
    throw new Error(`config.json of "${modelId}" is not valid JSON (${(err as Error).message})`);
  }
}

export async function fetchModelById(modelId: string, options: ModelSourceOptions = {}): Promise<ModelFiles> {
  if (isHubModelId(modelId)) {
    return fetchHubModelFiles(modelId, { onProgress: options.onProgress, signal: options.signal, endpoint: options.hubEndpoint });
  }
  if (isLocalModelId(modelId)) return localModelFiles(localFilesOf(modelId, options));
  return fetchModelFiles(modelUrl(modelId));
}
