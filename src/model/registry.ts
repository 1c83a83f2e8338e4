// Which models the app knows by id, and where their files are served. Pure data: the UI and
// share links import this without pulling in the GPU engine.
//
// Model ids: "embedded/..." (ships in public/), "/path/" (a directory this page serves), and
// "hf:owner/name" or "hf:owner/name@revision" (the Hugging Face Hub, loaded by
// fetchHubModelFiles in src/model/hub, cached in the browser), and "local:<name>" (files the
// user picked; a link or a resumed run asks for them again).
import { HUB_MODEL_PREFIX, parseHubId } from './hub/hubId';

/**
 * Where the files of public/ are served. An absolute base ("/" in the dev server and tests) is
 * used as configured. The build uses a relative base ("./", so it works under any sub-path), and
 * a relative URL would resolve against the fetching script: in a worker that is its own file in
 * assets/, not the page. The build emits every chunk, the workers' included, into assets/ right
 * under the page (build.assetsDir in vite.config.ts), so the page's folder is one up from here.
 */
function publicBaseUrl(): string {
  const base = import.meta.env.BASE_URL;
  if (base.startsWith('/') || /^[a-z][a-z\d+.-]*:/i.test(base)) return base;
  // Through a variable: Vite rewrites `new URL(…, import.meta.url)` as a reference to a bundled file.
  const here = import.meta.url;
  return new URL(`../${base}`, here).href;
}

/** Models the app offers without a download: their files are served from public/. */
export const EMBEDDED_MODELS: Record<string, { url: string; label: string }> = {
  'embedded/tiny-gpt2-byte': { url: `${publicBaseUrl()}models/tiny-gpt2-byte/`, label: 'Tiny GPT-2 (byte-level, 0.86M parameters, ships with the page)' },
  // The "Learn from a teacher" lesson's teacher (issue 11): the model above after a few GRPO steps on
  // the "Open with The" preset (scripts/experiments/distill.mjs --save-teacher), F16, same tokenizer.
  'embedded/tiny-gpt2-byte-the': { url: `${publicBaseUrl()}models/tiny-gpt2-byte-the/`, label: 'Tiny GPT-2 taught to open with "The" (the distillation lesson\'s teacher, ships with the page)' },
};

export const DEFAULT_MODEL_ID = 'embedded/tiny-gpt2-byte';

/**
 * Where a model id's files are served: embedded ids map to public/; an id starting with "/"
 * is a model directory served by this page (checkpoints, test fixtures).
 */
export function modelUrl(modelId: string): string {
  if (modelId.startsWith('/') && !modelId.startsWith('//') && !modelId.includes('..')) return modelId;
  if (isLocalModelId(modelId)) throw new Error(`"${modelId}" was loaded from files on this computer: pick them again`);
  if (isHubModelId(modelId)) {
    throw new Error(`"${modelId}" is a Hugging Face Hub model: load it with fetchHubModelFiles (src/model/hub), not from a served directory`);
  }
  const embedded = EMBEDDED_MODELS[modelId];
  if (!embedded) throw new Error(`unknown model "${modelId}" (known: ${Object.keys(EMBEDDED_MODELS).join(', ')})`);
  return embedded.url;
}

export const LOCAL_MODEL_PREFIX = 'local:';

/** True for "local:<name>" ids: a model loaded from files the user picked. */
export function isLocalModelId(modelId: string): boolean {
  return modelId.startsWith(LOCAL_MODEL_PREFIX) && modelId.length > LOCAL_MODEL_PREFIX.length;
}

/** The id for a model picked from disk, named after its folder (or first file). */
export function localModelId(name: string): string {
  const clean = name.replace(/[^\w.\- ]+/g, '_').trim().slice(0, 120) || 'model';
  return `${LOCAL_MODEL_PREFIX}${clean}`;
}

/** True for "hf:owner/name[@revision]" ids (valid or not: parseHubModelId says what is wrong). */
export function isHubModelId(modelId: string): boolean {
  return modelId.startsWith(HUB_MODEL_PREFIX);
}

/** The Hub repository and revision of an "hf:" id; a clear error for a malformed one. */
export function parseHubModelId(modelId: string): { id: string; revision: string } {
  if (!isHubModelId(modelId)) throw new Error(`"${modelId}" is not a Hub model id (those start with "${HUB_MODEL_PREFIX}", e.g. hf:HuggingFaceTB/SmolLM2-135M-Instruct)`);
  return parseHubId(modelId);
}
