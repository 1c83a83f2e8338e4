// The File objects of models picked from this computer, kept in page memory only (never in the
// experiment, a link or the store): the trainer worker reads them when a run opens. A link or
// a saved run that names a "local:" model therefore needs its files picked again.
import { isLocalModelId } from '../../model/registry';
import { pickedFilesProblem, pickedModelId } from './localPick';

export class PickedModels {
  /** Picked files by model id ("local:<folder>"). */
  private picked = $state.raw<Record<string, File[]>>({});

  /** Keeps a pick's files and returns its model id; a pick without config or weights is refused. */
  add(files: readonly File[]): string {
    const problem = pickedFilesProblem(files);
    if (problem) throw new Error(problem);
    const modelId = pickedModelId(files);
    this.picked = { ...this.picked, [modelId]: [...files] };
    return modelId;
  }

  filesFor(modelId: string): File[] | undefined {
    return isLocalModelId(modelId) ? this.picked[modelId] : undefined;
  }

  /** Why a "local:" model cannot load yet (its files are not in this page); null otherwise. */
  missingFor(modelId: string): string | null {
    if (!isLocalModelId(modelId) || this.picked[modelId]) return null;
    return `The model "${modelId}" came from files on a computer, which links and saved runs do not carry: pick its folder (or files) again under "Files on this computer" to train it.`;
  }
}
