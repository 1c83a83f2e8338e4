// Sharded checkpoints: model.safetensors.index.json maps every tensor to one of several
// safetensors files. After reading, sharded and single-file weights are the same tensor map,
// so everything after this (names, shapes, upload) is one code path.
import { readSafetensors, readSafetensorsHeader, type Tensor } from '../safetensors';

export const INDEX_FILE = 'model.safetensors.index.json';
export const SINGLE_FILE = 'model.safetensors';

export interface ShardIndex {
  /** Tensor name → shard file name. */
  weightMap: Record<string, string>;
  /** The shard files, each once, in name order. */
  files: string[];
  /** metadata.total_size: tensor bytes of all shards, when the index says. */
  totalSize: number | null;
}

export interface ShardedWeights {
  index: ShardIndex;
  shards: { file: string; buffer: ArrayBuffer }[];
}

export class ShardError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShardError';
  }
}

const SHARD_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*\.safetensors$/;

export function parseShardIndex(json: unknown): ShardIndex {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new ShardError(`${INDEX_FILE}: not a JSON object`);
  const { weight_map: map, metadata } = json as { weight_map?: unknown; metadata?: { total_size?: unknown } };
  if (typeof map !== 'object' || map === null || Array.isArray(map)) throw new ShardError(`${INDEX_FILE}: "weight_map" is missing or not an object`);
  const weightMap: Record<string, string> = {};
  for (const [tensor, file] of Object.entries(map)) {
    if (typeof file !== 'string' || !SHARD_NAME.test(file) || file.includes('..')) {
      throw new ShardError(`${INDEX_FILE}: tensor "${tensor}" maps to ${JSON.stringify(file)}, which is not a .safetensors file name in the same folder`);
    }
    weightMap[tensor] = file;
  }
  const files = [...new Set(Object.values(weightMap))].sort();
  if (files.length === 0) throw new ShardError(`${INDEX_FILE}: "weight_map" names no tensors`);
  const total = metadata?.total_size;
  return { weightMap, files, totalSize: typeof total === 'number' && Number.isFinite(total) ? total : null };
}

function tensorNames(buffer: ArrayBuffer, file: string): string[] {
  return Object.keys(readSafetensorsHeader(buffer, file).header).filter((k) => k !== '__metadata__');
}

/**
 * Checks, from the headers alone, that every tensor the index names is in the shard it names,
 * and that no tensor is in two shards. Problems are listed (a few by name, then a count).
 */
export function checkShardCoverage(sharded: ShardedWeights): void {
  const byFile = new Map(sharded.shards.map((s) => [s.file, s.buffer]));
  const missingFiles = sharded.index.files.filter((f) => !byFile.has(f));
  if (missingFiles.length) throw new ShardError(`${INDEX_FILE} names shards that were not read: ${missingFiles.join(', ')}`);
  const foundIn = new Map<string, string>();
  const duplicates: string[] = [];
  for (const { file, buffer } of sharded.shards) {
    for (const name of tensorNames(buffer, file)) {
      const earlier = foundIn.get(name);
      if (earlier !== undefined) duplicates.push(`${name} (in ${earlier} and ${file})`);
      else foundIn.set(name, file);
    }
  }
  if (duplicates.length) throw new ShardError(`tensors stored in two shards: ${listSome(duplicates)}`);
  const problems: string[] = [];
  for (const [name, file] of Object.entries(sharded.index.weightMap)) {
    const actual = foundIn.get(name);
    if (actual === undefined) problems.push(`${name} (not in any shard; the index says ${file})`);
    else if (actual !== file) problems.push(`${name} (in ${actual}; the index says ${file})`);
  }
  if (problems.length) throw new ShardError(`${INDEX_FILE} does not match the shards: ${listSome(problems)}`);
}

function listSome(items: string[]): string {
  const shown = items.slice(0, 5).join(', ');
  return items.length > 5 ? `${shown} and ${items.length - 5} more` : shown;
}

/** All shards' tensors in one map, after checking them against the index. */
export function readShardedWeights(sharded: ShardedWeights): Map<string, Tensor> {
  checkShardCoverage(sharded);
  const tensors = new Map<string, Tensor>();
  for (const { file, buffer } of sharded.shards) {
    for (const [name, t] of readSafetensors(buffer, file).tensors) tensors.set(name, t);
  }
  return tensors;
}

/** The tensors of model.safetensors, or of all shards: the one map the loader works from. */
export function readModelWeights(weights: ArrayBuffer | ShardedWeights): Map<string, Tensor> {
  // Structural test: an ArrayBuffer from another realm (a worker, Node's fs) fails instanceof.
  return 'shards' in weights ? readShardedWeights(weights) : readSafetensors(weights, SINGLE_FILE).tensors;
}
