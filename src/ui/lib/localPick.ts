// Files picked from this computer as a model: the "local:<name>" id they get (named after the
// folder, or the weights file when loose files were picked) and a quick check that a model's
// essential files are among them, so a wrong pick is named at once rather than at Train.
import { localModelId } from '../../model/registry';

/** The part of a File the picker needs (a browser File, or a test's stand-in). */
export interface PickedFileInfo {
  name: string;
  size: number;
  /** "my-model/config.json" for files picked as a folder; "" otherwise. */
  webkitRelativePath?: string;
}

/** The top folder of a folder pick, or null for loose files. */
function folderOf(files: readonly PickedFileInfo[]): string | null {
  const path = files.find((f) => f.webkitRelativePath)?.webkitRelativePath;
  return path && path.includes('/') ? path.slice(0, path.indexOf('/')) : null;
}

/** "local:<folder>", or "local:<weights file stem>" for loose files. */
export function pickedModelId(files: readonly PickedFileInfo[]): string {
  if (files.length === 0) throw new Error('no files were picked');
  const folder = folderOf(files);
  if (folder) return localModelId(folder);
  const weights = files.find((f) => f.name.endsWith('.safetensors')) ?? files[0];
  return localModelId(weights.name.replace(/(-\d{5}-of-\d{5})?\.safetensors$/, ''));
}

/** What a model's files lack among the picked ones, in words; null when config and weights are there. */
export function pickedFilesProblem(files: readonly PickedFileInfo[]): string | null {
  if (files.length === 0) return 'no files were picked: pick the model folder, or config.json, tokenizer.json, tokenizer_config.json and the .safetensors files';
  const names = new Set(files.map((f) => f.name));
  const missing: string[] = [];
  if (!names.has('config.json')) missing.push('config.json');
  if (![...names].some((n) => n.endsWith('.safetensors'))) missing.push('a .safetensors weights file');
  if (missing.length === 0) return null;
  const shown = files.length > 6 ? `${files.slice(0, 6).map((f) => f.name).join(', ')} and ${files.length - 6} more` : files.map((f) => f.name).join(', ');
  return `the picked files (${shown}) have no ${missing.join(' and no ')}: pick a model folder with config.json and its weights`;
}

export function pickedBytes(files: readonly PickedFileInfo[]): number {
  return files.reduce((s, f) => s + f.size, 0);
}
