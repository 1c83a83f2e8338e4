// The store layer: IndexedDB persistence of runs, rubric versions, prompt sets, rollouts,
// metrics and checkpoints (idb), with transactional step commits and per-run locks.
export {
  RunStore,
  DEFAULT_KEEP_CHECKPOINTS,
  type RunStoreOptions,
  type StorageManagerLike,
  type NewRun,
  type RunInfo,
  type RolloutQuery,
  type PruneResult,
  type StoredCheckpoint,
} from './runStore';
export { estimatePrune, type PrunePlan, type PruneEstimate, type RolloutStepUsage } from './prune';
export { withRunLock, memoryLocks, defaultLocks, runLockName, type LockManagerLike } from './locks';
export { heldRunIds, shownStatus, type ShownStatus, type LockQueryLike } from './liveness';
export { StatusWriter, type StatusTarget } from './statusWriter';
export { StorageFullError, STORAGE_FULL_PREFIX, isStorageFullMessage, RunLockedError, RunNotFoundError, StoreClosedError, isQuotaError, formatBytes, type StorageUsage } from './errors';
export {
  DB_NAME,
  DB_VERSION,
  RUN_STATUSES,
  totalBytes,
  type RunStatus,
  type RunRecord,
  type RunUsage,
  type UsageCount,
  type RunExperiment,
  type RubricRecord,
  type RubricLabels,
  type LabelRolloutKey,
  type PromptSetRecord,
  type StoredRollout,
  type MetricsRecord,
  type CheckpointRecord,
} from './schema';
export { approxBytes } from './size';
