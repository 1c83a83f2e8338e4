// How a criterion's verdict reads. A positive criterion passes when met. A penalty (negative
// weight) checks for something unwanted: its rule "met" means the thing was detected, which
// costs reward; not met means it was not found. Saying "pass" or "✓" for a penalty that was not
// triggered, without saying so, reads the wrong way round (the criterion text often says "Does
// not shout" while its rule detects shouting), so penalties say what was detected and its cost.

export interface VerdictWords {
  /** The short label: "✓ met", "✗ detected: costs reward", … */
  label: string;
  /** One sentence for a tooltip or a screen reader. */
  explain: string;
}

/**
 * `good`: whether the verdict is in the rollout's favour (met, for a positive criterion; not
 * detected, for a penalty); `weight` the criterion's weight (0: tracked, no reward either way).
 */
export function verdictWords(good: boolean, weight: number): VerdictWords {
  if (weight < 0) {
    const cost = `${-weight}`;
    return good
      ? { label: '✓ not detected', explain: `penalty not triggered: nothing detected, no reward lost (weight ${weight})` }
      : { label: '✗ detected: costs reward', explain: `penalty triggered: detected, which costs reward (weight −${cost})` };
  }
  if (weight === 0) return good ? { label: '• met (tracked)', explain: 'met; tracked only, weight 0: no reward either way' } : { label: '• not met (tracked)', explain: 'not met; tracked only, weight 0: no reward either way' };
  return good ? { label: '✓ met', explain: `met: earns its weight (${weight})` } : { label: '✗ not met', explain: `not met: misses its weight (${weight})` };
}
