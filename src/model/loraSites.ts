// Where LoRA adapters sit in the engine: one site per targeted PEFT module, with its A
// [r, in] and one B [out, r] per engine projection it feeds. A Llama module feeds one
// projection; GPT-2's c_attn feeds three (q, k, v), because the engine splits c_attn: PEFT's
// single lora_B [3·hidden, r] is kept as three row blocks, so x·Aᵀ is computed once and each
// block adds its slice. The math is PEFT's fused c_attn LoRA exactly.
import type { ModelConfig } from './config';
import { loraModules, matchesTarget } from './loraConfig';
import type { ParameterSpec } from './weights';

export type ProjectionRole = 'q' | 'k' | 'v' | 'o' | 'gate' | 'up' | 'down';

/** The activation a site reads: q/k/v read the attention input, gate/up the MLP input. */
export type SiteInput = 'attention_input' | 'attention_output' | 'mlp_input' | 'mlp_hidden';

export interface LoraOutput {
  role: ProjectionRole;
  outDim: number;
  /** Internal parameter name of this block of B [outDim, r]. */
  b: string;
}

export interface LoraSite {
  /** Position in the model's site list (salts the site's dropout mask). */
  index: number;
  layer: number;
  /** Hugging Face module path, e.g. "transformer.h.0.attn.c_attn". */
  module: string;
  input: SiteInput;
  inDim: number;
  /** Internal parameter name of A [r, inDim] (PEFT's lora_A.weight layout). */
  a: string;
  /** B's row blocks in PEFT's order (q, k, v for c_attn). */
  outputs: LoraOutput[];
}

const ROLES: Record<string, ProjectionRole[]> = {
  q_proj: ['q'],
  k_proj: ['k'],
  v_proj: ['v'],
  o_proj: ['o'],
  gate_proj: ['gate'],
  up_proj: ['up'],
  down_proj: ['down'],
  'attn.c_attn': ['q', 'k', 'v'],
  'attn.c_proj': ['o'],
  'mlp.c_fc': ['up'],
  'mlp.c_proj': ['down'],
};

const INPUT: Record<ProjectionRole, SiteInput> = {
  q: 'attention_input',
  k: 'attention_input',
  v: 'attention_input',
  o: 'attention_output',
  gate: 'mlp_input',
  up: 'mlp_input',
  down: 'mlp_hidden',
};

/** (in, out) of each projection. */
export function projectionDims(c: ModelConfig): Record<ProjectionRole, [number, number]> {
  const D = c.hiddenSize;
  const qDim = c.numHeads * c.headDim;
  const kvDim = c.numKvHeads * c.headDim;
  const F = c.intermediateSize;
  return { q: [D, qDim], k: [D, kvDim], v: [D, kvDim], o: [qDim, D], gate: [D, F], up: [D, F], down: [F, D] };
}

function rolesOf(path: string): ProjectionRole[] {
  const key = Object.keys(ROLES).find((k) => path.endsWith(`.${k}`));
  if (!key) throw new Error(`no projection is known for module ${path}`);
  return ROLES[key];
}

/** The sites of the modules `targets` match (PEFT matching), in layer order. */
export function loraSites(config: ModelConfig, targets: readonly string[]): LoraSite[] {
  const dims = projectionDims(config);
  const modules = loraModules(config).filter((m) => targets.some((t) => matchesTarget(m.path, t)));
  return modules.map((m, index) => {
    const roles = rolesOf(m.path);
    const split = roles.length > 1;
    return {
      index,
      layer: m.layer,
      module: m.path,
      input: INPUT[roles[0]],
      inDim: dims[roles[0]][0],
      a: `${m.path}.lora_A.weight`,
      outputs: roles.map((role) => ({ role, outDim: dims[role][1], b: split ? `${m.path}.lora_B.${role}.weight` : `${m.path}.lora_B.weight` })),
    };
  });
}

/** The adapter tensors of `sites` at rank r, in site order (A, then B's blocks). */
export function loraParameterSpecs(sites: readonly LoraSite[], r: number): ParameterSpec[] {
  return sites.flatMap((s) => [{ name: s.a, shape: [r, s.inDim] }, ...s.outputs.map((o) => ({ name: o.b, shape: [o.outDim, r] }))]);
}
