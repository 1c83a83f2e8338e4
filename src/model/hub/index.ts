// Loading models from the Hugging Face Hub (or a server laid out like it) and from picked files.
export { fetchHubModelFiles, type HubFetchOptions, type HubLoadReport, type HubModelFiles } from './fetchHubModel';
export { localModelFiles, localFileSource, type PickedFile } from './localFiles';
export { assembleModelFiles, type ModelFileSource } from './assemble';
export { listCachedModels, deleteCachedModel, ModelCache, ModelCacheQuotaError, MODEL_CACHE_NAME, type CachedModel } from './modelCache';
export { parseHubId, hubModelId, resolveUrl, normalizeEndpoint, HUB_ENDPOINT, HUB_MODEL_PREFIX, HubIdError, type HubModelRef } from './hubId';
export { DownloadCancelledError, HubHttpError, MissingFileError, formatBytes } from './errors';
export type { DownloadProgress, ProgressListener } from './progress';
