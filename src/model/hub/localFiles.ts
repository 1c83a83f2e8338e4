// A model from files the user picked (a folder through <input webkitdirectory>, or several
// files): found by name, folders ignored, then the same assembly as Hub downloads.
import type { ModelFiles } from '../load';
import { assembleModelFiles, type ModelFileSource } from './assemble';
import { MissingFileError } from './errors';

/** The part of a File this needs (a browser File, or a test's stand-in). */
export interface PickedFile {
  name: string;
  /** Set for files picked as a folder: "my-model/config.json". */
  webkitRelativePath?: string;
  arrayBuffer(): Promise<ArrayBuffer>;
}

function pathOf(f: PickedFile): string {
  return f.webkitRelativePath || f.name;
}

export function localFileSource(picked: ArrayLike<PickedFile>): ModelFileSource {
  const all = Array.from(picked);
  if (all.length === 0) throw new Error('no files were picked: pick the model folder, or config.json, tokenizer files and the .safetensors files');
  const byName = new Map<string, PickedFile[]>();
  for (const f of all) byName.set(f.name, [...(byName.get(f.name) ?? []), f]);
  const listing = all.map(pathOf).sort();
  const shown = listing.length > 8 ? `${listing.slice(0, 8).join(', ')} and ${listing.length - 8} more` : listing.join(', ');
  return {
    where: 'the picked files',
    async read(file) {
      const matches = byName.get(file.split('/').pop() ?? file) ?? [];
      if (matches.length === 0) throw new MissingFileError(file, `not among the picked files (${shown})`);
      // A repository folder may hold copies in subfolders (onnx/, original/): the shallowest wins.
      const depth = (f: PickedFile) => pathOf(f).split('/').length;
      const top = Math.min(...matches.map(depth));
      const chosen = matches.filter((f) => depth(f) === top);
      if (chosen.length > 1) {
        throw new Error(`${file} was picked ${chosen.length} times (${chosen.map(pathOf).join(', ')}): pick one model folder`);
      }
      return chosen[0].arrayBuffer();
    },
  };
}

/** ModelFiles from picked files, exactly as fetchHubModelFiles builds them from downloads. */
export async function localModelFiles(picked: ArrayLike<PickedFile>): Promise<ModelFiles> {
  return assembleModelFiles(localFileSource(picked));
}
