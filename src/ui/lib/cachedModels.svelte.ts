// The models downloaded into this browser's model cache (Cache API), with their sizes and the
// site's storage use, for the "Downloaded models" list; deleting one frees its space (it
// downloads again when next used). Browser storage only: no GPU engine.
import { deleteCachedModel, listCachedModels, type CachedModel } from '../../model/hub/modelCache';

export class CachedModelsList {
  models = $state.raw<CachedModel[]>([]);
  /** What the browser says this site uses and may use; null where it does not say. */
  usage = $state.raw<{ usage: number; quota: number } | null>(null);
  error = $state<string | null>(null);
  loaded = $state(false);

  async refresh(): Promise<void> {
    try {
      this.models = await listCachedModels();
      this.error = null;
    } catch (e) {
      this.error = `Could not list the downloaded models: ${(e as Error).message}`;
    }
    this.usage = await storageUsage();
    this.loaded = true;
  }

  /** Deletes one cached model (that endpoint and revision only); returns what was freed. */
  async remove(model: CachedModel): Promise<{ files: number; bytes: number } | null> {
    try {
      const freed = await deleteCachedModel(`${model.id}@${model.revision}`, { endpoint: model.endpoint });
      this.error = null;
      await this.refresh();
      return freed;
    } catch (e) {
      this.error = `Could not delete ${model.id}: ${(e as Error).message}`;
      return null;
    }
  }
}

async function storageUsage(): Promise<{ usage: number; quota: number } | null> {
  try {
    const e = await navigator.storage?.estimate?.();
    return e && typeof e.usage === 'number' && typeof e.quota === 'number' ? { usage: e.usage, quota: e.quota } : null;
  } catch {
    return null;
  }
}
