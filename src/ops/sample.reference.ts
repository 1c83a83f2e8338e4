// Float64 reference twin of shaders/sample.wgsl: the same hash-based uniform draw, exact
// sort-based top-k / top-p (ties at a threshold kept), and a walk in index order. A row with a
// NaN or +inf logit, a non-finite scaled logit (other than a masked -inf), or nothing but
// masked entries gives NO_TOKEN and a NaN log-prob, as the kernel does. The repetition penalty
// (HF semantics: a seen id's logit / penalty if > 0, else × penalty) is applied in f32 as the
// kernel does, before everything; min-p keeps z >= zmax + log(min_p) after top-k / top-p. The
// log-prob is of the unpenalised logits / temperature.

/** The sampler's "no token" id: outside every vocabulary (the row could not be sampled). */
export const NO_TOKEN = 0xffffffff;

export interface SampleOptions {
  /** 0 means greedy decoding. */
  temperature: number;
  /** 0 disables. */
  topK: number;
  /** 1 disables. */
  topP: number;
  seed: number;
  step: number;
  /** TRL repetition_penalty: 1 (default) disables. */
  repetitionPenalty?: number;
  /** TRL min_p: 0 / undefined disables. */
  minP?: number;
}

/** The kernel's penalised logit (f32 arithmetic, as the kernel does it). */
export function penalisedLogit(raw: number, penalty: number): number {
  const p = Math.fround(penalty);
  return raw > 0 ? Math.fround(raw / p) : Math.fround(raw * p);
}

export interface SampleRefResult {
  /** NO_TOKEN when the row holds NaN/+inf logits or nothing unmasked. */
  token: number;
  /** log softmax(logits / temperature)[token] over the full vocabulary (0 for greedy; NaN for NO_TOKEN). */
  logprob: number;
  /** Distance of the draw from the nearest edge of the chosen token's interval, as a fraction of the kept mass. */
  margin: number;
}

function pcg(v: number): number {
  const state = (Math.imul(v >>> 0, 747796405) + 2891336453) >>> 0;
  const word = Math.imul(((state >>> ((state >>> 28) + 4)) ^ state) >>> 0, 277803737) >>> 0;
  return ((word >>> 22) ^ word) >>> 0;
}

/** The kernel's uniform draw in [0, 1) for (seed, global row, step). */
export function uniform01(seed: number, row: number, step: number): number {
  const h = pcg((seed ^ pcg((row ^ pcg(step)) >>> 0)) >>> 0);
  return (h >>> 8) / 16777216;
}

/** `seen`: ids already in this row's sequence (prompt + completion so far), for the repetition penalty. */
export function sampleRowRef(raw: ArrayLike<number>, row: number, o: SampleOptions, seen: Iterable<number> = []): SampleRefResult {
  const vocab = raw.length;
  const penalty = o.repetitionPenalty ?? 1;
  const seenSet = penalty === 1 ? new Set<number>() : new Set(seen);
  const logits = Array.from(raw, (x, i) => (seenSet.has(i) ? penalisedLogit(x, penalty) : x));
  const noToken: SampleRefResult = { token: NO_TOKEN, logprob: NaN, margin: Infinity };
  // Masked: a -inf logit before the penalty (a finite logit the penalty overflows is flagged below).
  const masked = (i: number) => raw[i] === -Infinity;
  if (o.temperature === 0) {
    let best = -1;
    for (let i = 0; i < vocab; i++) {
      if (logits[i] === -Infinity) continue; // the kernel's greedy pass reads the penalised logit
      if (!Number.isFinite(logits[i])) return noToken;
      if (best < 0 || logits[i] > logits[best]) best = i;
    }
    return best < 0 ? noToken : { token: best, logprob: 0, margin: Infinity };
  }
  // The kernel scales by the f32 reciprocal of the temperature; an overflow there is a flag too.
  const invT = Math.fround(1 / o.temperature);
  for (let i = 0; i < vocab; i++) {
    if (!masked(i) && !(Number.isFinite(Math.fround(logits[i] * invT)) && Number.isFinite(Math.fround(raw[i] * invT)))) return noToken;
  }
  const z = Array.from(logits, (x) => x / o.temperature);
  const finite = z.filter((_, i) => !masked(i));
  if (finite.length === 0) return noToken;
  const zmax = Math.max(...finite);
  let theta = -Infinity;
  if (o.topK > 0 && o.topK < finite.length) {
    theta = [...finite].sort((a, b) => b - a)[o.topK - 1];
  }
  if (o.topP < 1) {
    const kept = finite.filter((x) => x >= theta).sort((a, b) => b - a);
    const total = kept.reduce((s, x) => s + Math.exp(x - zmax), 0);
    let acc = 0;
    for (const x of kept) {
      acc += Math.exp(x - zmax);
      if (acc >= o.topP * total) {
        theta = x;
        break;
      }
    }
  }
  const minP = o.minP ?? 0;
  if (minP > 0) theta = Math.max(theta, zmax + Math.log(minP));
  let mass = 0;
  z.forEach((x, i) => {
    if (!masked(i) && x >= theta) mass += Math.exp(x - zmax);
  });
  const target = uniform01(o.seed, row, o.step) * mass;
  let acc = 0;
  let token = -1;
  let margin = Infinity;
  for (let i = 0; i < vocab; i++) {
    if (masked(i) || z[i] < theta) continue;
    const w = Math.exp(z[i] - zmax);
    if (target < acc + w) {
      token = i;
      margin = Math.min(target - acc, acc + w - target) / mass;
      break;
    }
    acc += w;
    token = i; // rounding can push the target past the end: the last kept token owns it
    margin = 0;
  }
  // The log-prob is of the unpenalised distribution: the policy's own, as TRL recomputes it.
  const r = Array.from(raw, (x) => x / o.temperature).filter((_, i) => !masked(i));
  const rmax = Math.max(...r);
  const logZ = rmax + Math.log(r.reduce((s, x) => s + Math.exp(x - rmax), 0));
  return { token, logprob: raw[token] / o.temperature - logZ, margin };
}
