// LoRA settings with PEFT's LoraConfig names and TRL's ModelConfig defaults (lora_r 16,
// lora_alpha 32, lora_dropout 0.05), and which of a model's linear layers they target.
// Module names are PEFT's for the architecture: a target matches a module whose path equals it
// or ends with "." + target, exactly as PEFT matches target_modules. GPT-2's fused c_attn is one
// LoRA module (one A, one B of 3·hidden rows) even though the engine splits c_attn into q/k/v.
import type { ModelConfig } from './config';

export interface LoraConfig {
  /** Rank (TRL ModelConfig's lora_r). */
  r: number;
  lora_alpha: number;
  /** Dropout on the adapter's input while training; never while sampling. */
  lora_dropout: number;
  /** PEFT module names, or "all-linear" (every linear layer of the blocks, not the LM head). */
  target_modules: string[] | 'all-linear';
  /** Scale alpha / sqrt(r) instead of alpha / r. */
  use_rslora: boolean;
}

export interface ResolvedLoraConfig extends LoraConfig {
  target_modules: string[];
  /** The factor applied to B·A: lora_alpha / r, or lora_alpha / sqrt(r) with use_rslora. */
  scale: number;
}

/** TRL ModelConfig defaults; target_modules defaults to PEFT's per-architecture choice. */
export const LORA_DEFAULTS = { r: 16, lora_alpha: 32, lora_dropout: 0.05, use_rslora: false } as const;

/** PEFT's TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING for the architectures we run. */
export function defaultTargetModules(config: ModelConfig): string[] {
  return config.architecture === 'gpt2' ? ['c_attn'] : ['q_proj', 'v_proj'];
}

export class LoraConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LoraConfigError';
  }
}

/** One LoRA-capable linear module of a transformer block, as PEFT names it. */
export interface LoraModule {
  layer: number;
  /** Full module path in the Hugging Face model, e.g. "model.layers.0.self_attn.q_proj". */
  path: string;
  /** PEFT's short name, e.g. "q_proj", "c_attn". */
  name: string;
}

const LLAMA_MODULES = [
  ['self_attn', 'q_proj'],
  ['self_attn', 'k_proj'],
  ['self_attn', 'v_proj'],
  ['self_attn', 'o_proj'],
  ['mlp', 'gate_proj'],
  ['mlp', 'up_proj'],
  ['mlp', 'down_proj'],
] as const;

const GPT2_MODULES = [
  ['attn', 'c_attn'],
  ['attn', 'c_proj'],
  ['mlp', 'c_fc'],
  ['mlp', 'c_proj'],
] as const;

/** Every linear module of every block that LoRA can target, in layer order. */
export function loraModules(config: ModelConfig): LoraModule[] {
  const out: LoraModule[] = [];
  for (let layer = 0; layer < config.numLayers; layer++) {
    if (config.architecture === 'gpt2') {
      for (const [block, name] of GPT2_MODULES) out.push({ layer, path: `transformer.h.${layer}.${block}.${name}`, name });
    } else {
      for (const [block, name] of LLAMA_MODULES) out.push({ layer, path: `model.layers.${layer}.${block}.${name}`, name });
    }
  }
  return out;
}

/** The names a user can give for this architecture (short names, plus block-qualified ones where a short name is ambiguous). */
export function validTargetNames(config: ModelConfig): string[] {
  return config.architecture === 'gpt2'
    ? ['c_attn', 'c_proj', 'c_fc', 'attn.c_proj', 'mlp.c_proj']
    : LLAMA_MODULES.map(([, name]) => name);
}

/** PEFT's match: the module path equals the target or ends with "." + target. */
export function matchesTarget(path: string, target: string): boolean {
  return path === target || path.endsWith(`.${target}`);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const KNOWN_KEYS = new Set(['r', 'lora_alpha', 'lora_dropout', 'target_modules', 'use_rslora']);
/** A resolved config may be passed back in: its derived scale is recomputed, not read. */
const DERIVED_KEYS = new Set(['scale']);

/** Fills defaults and checks every field; errors name the field and the accepted values. */
export function resolveLoraConfig(options: Partial<LoraConfig>, model: ModelConfig): ResolvedLoraConfig {
  if (!isPlainObject(options)) throw new LoraConfigError('LoRA config must be an object');
  for (const key of Object.keys(options)) {
    if (!KNOWN_KEYS.has(key) && !DERIVED_KEYS.has(key)) {
      throw new LoraConfigError(`LoRA config: unknown field "${key}" (known: ${[...KNOWN_KEYS].join(', ')}; TRL's lora_r is "r" here)`);
    }
  }
  const r = options.r ?? LORA_DEFAULTS.r;
  const alpha = options.lora_alpha ?? LORA_DEFAULTS.lora_alpha;
  const dropout = options.lora_dropout ?? LORA_DEFAULTS.lora_dropout;
  const rslora = options.use_rslora ?? LORA_DEFAULTS.use_rslora;
  if (!Number.isInteger(r) || r < 1) throw new LoraConfigError(`LoRA config: r must be an integer >= 1, got ${JSON.stringify(r)}`);
  if (typeof alpha !== 'number' || !Number.isFinite(alpha) || alpha <= 0) {
    throw new LoraConfigError(`LoRA config: lora_alpha must be a finite number > 0, got ${JSON.stringify(alpha)}`);
  }
  if (typeof dropout !== 'number' || !(dropout >= 0 && dropout < 1)) {
    throw new LoraConfigError(`LoRA config: lora_dropout must be in [0, 1), got ${JSON.stringify(dropout)}`);
  }
  if (typeof rslora !== 'boolean') throw new LoraConfigError(`LoRA config: use_rslora must be true or false, got ${JSON.stringify(rslora)}`);
  const targets = resolveTargets(options.target_modules, model);
  return {
    r,
    lora_alpha: alpha,
    lora_dropout: dropout,
    target_modules: targets,
    use_rslora: rslora,
    scale: rslora ? alpha / Math.sqrt(r) : alpha / r,
  };
}

function resolveTargets(given: LoraConfig['target_modules'] | undefined, model: ModelConfig): string[] {
  const valid = validTargetNames(model);
  const hint = `valid for ${model.architecture}: ${valid.join(', ')}, or "all-linear"`;
  if (given === undefined) return defaultTargetModules(model);
  if (given === 'all-linear') return model.architecture === 'gpt2' ? ['c_attn', 'c_proj', 'c_fc'] : LLAMA_MODULES.map(([, n]) => n);
  if (!Array.isArray(given) || given.length === 0 || !given.every((t) => typeof t === 'string' && t.length > 0)) {
    throw new LoraConfigError(`LoRA config: target_modules must be a non-empty list of module names (${hint}), got ${JSON.stringify(given)}`);
  }
  const modules = loraModules(model);
  const unknown = given.filter((t) => !modules.some((m) => matchesTarget(m.path, t)));
  if (unknown.length) {
    throw new LoraConfigError(`LoRA config: target_modules ${unknown.map((t) => `"${t}"`).join(', ')} match no layer of this model (${hint})`);
  }
  return [...new Set(given)];
}

/** TRL ModelConfig field names (use_peft's companions) → LoraConfig. */
export interface TrlLoraFields {
  lora_r?: number;
  lora_alpha?: number;
  lora_dropout?: number;
  /** null / undefined: PEFT's default for the architecture. */
  lora_target_modules?: string[] | 'all-linear' | null;
  use_rslora?: boolean;
}

export function loraConfigFromTrl(fields: TrlLoraFields): Partial<LoraConfig> {
  const out: Partial<LoraConfig> = {};
  if (fields.lora_r !== undefined) out.r = fields.lora_r;
  if (fields.lora_alpha !== undefined) out.lora_alpha = fields.lora_alpha;
  if (fields.lora_dropout !== undefined) out.lora_dropout = fields.lora_dropout;
  if (fields.lora_target_modules != null) out.target_modules = fields.lora_target_modules;
  if (fields.use_rslora !== undefined) out.use_rslora = fields.use_rslora;
  return out;
}
