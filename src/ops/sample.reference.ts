// Float64 reference twin of shaders/sample.wgsl: the same hash-based uniform draw, exact
// sort-based top-k / top-p (ties at a threshold kept), and a walk in index order.

export interface SampleOptions {
  /** 0 means greedy decoding. */
  temperature: number;
  /** 0 disables. */
  topK: number;
  /** 1 disables. */
  topP: number;
  seed: number;
  step: number;
}

export interface SampleRefResult {
  token: number;
  /** log softmax(logits / temperature)[token] over the full vocabulary (0 for greedy). */
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

export function sampleRowRef(logits: ArrayLike<number>, row: number, o: SampleOptions): SampleRefResult {
  const vocab = logits.length;
  if (o.temperature === 0) {
    let best = -1;
    for (let i = 0; i < vocab; i++) if (logits[i] !== -Infinity && (best < 0 || logits[i] > logits[best])) best = i;
    return { token: best, logprob: 0, margin: Infinity };
  }
  const z = Array.from(logits, (x) => x / o.temperature);
  const finite = z.filter((x) => x !== -Infinity);
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
  let mass = 0;
  for (const x of z) if (x !== -Infinity && x >= theta) mass += Math.exp(x - zmax);
  const target = uniform01(o.seed, row, o.step) * mass;
  let acc = 0;
  let token = -1;
  let margin = Infinity;
  for (let i = 0; i < vocab; i++) {
    if (z[i] === -Infinity || z[i] < theta) continue;
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
  const logZ = zmax + Math.log(finite.reduce((s, x) => s + Math.exp(x - zmax), 0));
  return { token, logprob: z[token] - logZ, margin };
}
