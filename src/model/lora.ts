// LoRA adapters of one model: the resolved config (PEFT names, TRL defaults) and the sites it
// targets, with lookups the transformer uses in its forward and backward passes. Pure: the
// adapter tensors live in the model's ParameterStore (Transformer.attachLora puts them there).
import type { ModelConfig } from './config';
import { resolveLoraConfig, type LoraConfig, type ResolvedLoraConfig } from './loraConfig';
import { loraParameterSpecs, loraSites, type LoraSite, type ProjectionRole, type SiteInput } from './loraSites';
import type { ModelNames, ParameterSpec } from './weights';

export { LORA_DEFAULTS, LoraConfigError, loraConfigFromTrl, resolveLoraConfig, type LoraConfig, type ResolvedLoraConfig, type TrlLoraFields } from './loraConfig';
export type { LoraSite, ProjectionRole, SiteInput } from './loraSites';

export class LoraAdapters {
  readonly config: ResolvedLoraConfig;
  readonly sites: readonly LoraSite[];
  private readonly byProjection = new Map<string, LoraSite>();

  constructor(model: ModelConfig, options: Partial<LoraConfig>) {
    this.config = resolveLoraConfig(options, model);
    this.sites = loraSites(model, this.config.target_modules);
    for (const site of this.sites) for (const o of site.outputs) this.byProjection.set(`${site.layer}:${o.role}`, site);
  }

  /** The site that adds into projection `role` of `layer`, if any. */
  siteFor(layer: number, role: ProjectionRole): LoraSite | null {
    return this.byProjection.get(`${layer}:${role}`) ?? null;
  }

  /** The sites of `layer` that read activation `input`. */
  sitesOf(layer: number, input: SiteInput): LoraSite[] {
    return this.sites.filter((s) => s.layer === layer && s.input === input);
  }

  /** Adapter tensors (A [r, in], B blocks [out, r]) in site order. */
  get specs(): ParameterSpec[] {
    return loraParameterSpecs(this.sites, this.config.r);
  }

  /** Internal names of the base weights an adapter adds to. */
  adaptedWeights(names: ModelNames): Set<string> {
    const out = new Set<string>();
    for (const site of this.sites) for (const o of site.outputs) out.add(projectionWeight(names, site.layer, o.role));
    return out;
  }
}

/** Internal name of projection `role`'s weight in `layer`. */
export function projectionWeight(names: ModelNames, layer: number, role: ProjectionRole): string {
  const l = names.layers[layer];
  const name = role === 'gate' ? l.gate : l[role];
  if (!name) throw new Error(`layer ${layer} has no ${role} projection`);
  return name;
}

/** Internal name of projection `role`'s bias in `layer` (null when it has none). */
export function projectionBias(names: ModelNames, layer: number, role: ProjectionRole): string | null {
  const l = names.layers[layer];
  const bias = { q: l.qBias, k: l.kBias, v: l.vBias, o: l.oBias, gate: null, up: l.upBias, down: l.downBias }[role];
  return bias;
}
