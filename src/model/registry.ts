// Which models the app knows by id, and where their files are served. Pure data: the UI and
// share links import this without pulling in the GPU engine.

/** Models the app offers without a download: their files are served from public/. */
export const EMBEDDED_MODELS: Record<string, { url: string; label: string }> = {
  'embedded/tiny-gpt2-byte': { url: `${import.meta.env.BASE_URL}models/tiny-gpt2-byte/`, label: 'Tiny GPT-2 (byte-level, 0.86M parameters, ships with the page)' },
};

export const DEFAULT_MODEL_ID = 'embedded/tiny-gpt2-byte';

/**
 * Where a model id's files are served: embedded ids map to public/; an id starting with "/"
 * is a model directory served by this page (checkpoints, test fixtures).
 */
export function modelUrl(modelId: string): string {
  if (modelId.startsWith('/') && !modelId.startsWith('//') && !modelId.includes('..')) return modelId;
  const embedded = EMBEDDED_MODELS[modelId];
  if (!embedded) throw new Error(`unknown model "${modelId}" (known: ${Object.keys(EMBEDDED_MODELS).join(', ')})`);
  return embedded.url;
}
