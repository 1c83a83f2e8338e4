// A model export (the worker's name → bytes-or-text record) as one zip for the browser to save:
// weights stored uncompressed (float tensors barely compress and can be gigabytes), JSON and
// tokenizer text deflated.
import { strToU8, zipSync, type Zippable } from 'fflate';

export type ModelExportFiles = Record<string, ArrayBuffer | string>;

export function zipModelFiles(files: ModelExportFiles): Uint8Array {
  const names = Object.keys(files);
  if (names.length === 0) throw new Error('the export has no files');
  const input: Zippable = {};
  for (const name of names) {
    const value = files[name];
    const bytes = typeof value === 'string' ? strToU8(value) : new Uint8Array(value);
    input[name] = [bytes, { level: name.endsWith('.safetensors') ? 0 : 6 }];
  }
  return zipSync(input);
}

/** "my-run-adapter.zip": the run's name made safe for a file name. */
export function exportZipName(runName: string, what: 'adapter' | 'model'): string {
  const base = runName.replace(/[^\w.-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80) || 'run';
  return `${base}-${what}.zip`;
}
