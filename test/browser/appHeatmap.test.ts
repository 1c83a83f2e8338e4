// The rollout inspector's token heatmap and the remote judge's key holder: the pure scale and
// colour logic in Node (every shade keeps the text legible), then the inspector mounted in the
// page on rollouts with token data (one span per token, text only, each quantity, the legend,
// the ratio note, the fallback for runs saved before token data), and the key's storage rules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, type Harness } from '../../scripts/lib/browser.mjs';
import type { RolloutRecord } from '../../src/rl/grpoStep';
import { contrastRatio, parseHex } from '../../src/ui/lib/contrast';
import { describeValue, heatColor, heatPosition, heatRgb, heatScale, HEAT_COLORS, tokenValues, visibleToken, type TokenQuantity } from '../../src/ui/lib/tokenHeat';

const INK = parseHex('#1b1f24');

function rollout(fields: Partial<RolloutRecord>): RolloutRecord {
  return {
    step: 0,
    group: 0,
    index: 0,
    prompt: 'p',
    completion: 'ab',
    completion_ids: [1, 2, 3],
    logprobs: [-0.5, -3, -1],
    truncated: false,
    results: [],
    scores: [],
    reward: null,
    advantage: 0.8,
    ...fields,
  };
}

describe('token heatmap logic', () => {
  const full = rollout({ tokens: ['a', ' b', '\n'], token_entropy: [0.1, 2, 0.5], token_ratio: [1, 1.2, 0.8], token_weight: [1, 1, 0] });

  it('gives one value per token for each quantity; advantage is advantage × weight', () => {
    expect(tokenValues(full, 'logprob')).toEqual([-0.5, -3, -1]);
    expect(tokenValues(full, 'entropy')).toEqual([0.1, 2, 0.5]);
    expect(tokenValues(full, 'ratio')).toEqual([1, 1.2, 0.8]);
    expect(tokenValues(full, 'advantage')).toEqual([0.8, 0.8, 0]);
  });

  it('is empty without token text, and null where a value is missing or not finite', () => {
    expect(tokenValues(rollout({}), 'logprob')).toEqual([]);
    const partial = rollout({ tokens: ['a', 'b', 'c'], logprobs: [-1, Number.NaN], token_entropy: undefined });
    expect(tokenValues(partial, 'logprob')).toEqual([-1, null, null]);
    expect(tokenValues(partial, 'entropy')).toEqual([null, null, null]);
    expect(tokenValues(partial, 'advantage')).toEqual([null, null, null]);
  });

  it('fits the scale to the values: log-prob and entropy sequential, ratio (in log space) and advantage diverging', () => {
    const lp = heatScale('logprob', [-0.5, -3, null, -1]);
    expect(lp).toMatchObject({ kind: 'sequential', extent: 3 });
    expect(heatPosition(lp, -3)).toBe(1);
    expect(heatPosition(lp, -1.5)).toBe(0.5);
    expect(heatPosition(lp, 0)).toBe(0);
    expect(heatPosition(lp, null)).toBeNull();
    const ratio = heatScale('ratio', [1, 2, 0.8]);
    expect(ratio.kind).toBe('diverging');
    expect(ratio.extent).toBeCloseTo(Math.log(2), 12);
    expect(heatPosition(ratio, 0.5)).toBeCloseTo(-1, 12);
    expect(heatPosition(ratio, 1)).toBe(0);
    expect(ratio.labels).toEqual(['0.5', '1', '2']);
    const adv = heatScale('advantage', [0.4, -0.2]);
    expect(heatPosition(adv, -0.2)).toBeCloseTo(-0.5, 12);
    expect(heatPosition(adv, 9)).toBe(1);
    // Every ratio exactly 1 (num_iterations = 1): nothing is tinted.
    const flat = heatScale('ratio', [1, 1, 1]);
    expect(flat.extent).toBe(0);
    expect(heatColor(flat, 1)).toBe('rgb(255, 255, 255)');
  });

  it('colours: white at the neutral point, the full tint at the ends, orange below and blue above the centre', () => {
    const adv = heatScale('advantage', [1, -1]);
    expect(heatRgb(adv, 1)).toEqual(parseHex(HEAT_COLORS.positive));
    expect(heatRgb(adv, -1)).toEqual(parseHex(HEAT_COLORS.negative));
    expect(heatRgb(adv, 0)).toEqual([255, 255, 255]);
    expect(heatRgb(heatScale('entropy', [2]), 1)).toEqual(parseHex(HEAT_COLORS.sequential));
  });

  it('keeps the page ink at 4.5:1 contrast or more on every shade of every scale', () => {
    for (const q of ['logprob', 'entropy', 'ratio', 'advantage'] as TokenQuantity[]) {
      const scale = heatScale(q, q === 'logprob' ? [-5] : q === 'ratio' ? [0.5, 2] : [-3, 3]);
      for (let p = -1; p <= 1.0001; p += 0.05) {
        const pos = scale.kind === 'sequential' ? Math.abs(p) : p;
        expect(contrastRatio(INK, heatRgb(scale, pos)!), `${q} at ${pos}`).toBeGreaterThanOrEqual(4.5);
      }
    }
    // The check can fail: the accent colour behind the ink is far below 4.5:1.
    expect(contrastRatio(INK, parseHex('#1f3a5f'))).toBeLessThan(4.5);
  });

  it('describes values in words, marks tokens out of the loss, and shows line breaks', () => {
    expect(describeValue('logprob', -Math.log(2), false)).toBe('log-prob -0.693 (p 0.5)');
    expect(describeValue('advantage', 0, true)).toBe('advantage × weight 0 (out of the loss)');
    expect(describeValue('entropy', null, false)).toContain('not recorded');
    expect(visibleToken('a\nb')).toBe('a↵\nb');
  });
});

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness();
});
afterAll(async () => {
  await harness?.close();
});

const PAYLOAD = '<img src=x onerror="window.__pwned=1">';

describe('token heatmap in the rollout inspector (page)', () => {
  it('renders one text span per token for every quantity, with a legend, notes and a fallback for old runs', async () => {
    const tokens = [
      ['Hi', ' there', PAYLOAD, '\n', '.'],
      ['<script>window.__pwned=2</script>', ' ok'],
    ];
    const r = await harness.runModule('/test/harness/cases/uiHeatmap.ts', 'heatmapInspector', {
      tokens,
      logprobs: [[-0.1, -2, -4, -0.5, -1], [-3, -0.2]],
      entropy: [[0.2, 1.5, 3, 0.1, 0.4], [2, 0.3]],
      ratio: [[1, 1, 1, 1, 1], [1, 1]],
      weight: [[1, 1, 1, 1, 0], [1, 1]],
      advantages: [0.9, -0.6],
      num_iterations: 1,
    });
    // Plain text until a quantity is chosen.
    expect(r.plain.spansPerRollout).toEqual([0, 0]);
    expect(r.plain.plainTexts).toEqual(tokens.map((t) => t.join('')));
    for (const q of ['logprob', 'entropy', 'ratio', 'advantage']) {
      expect(r[q].spansPerRollout, q).toEqual([5, 2]);
      expect(r[q].tokenTexts, q).toEqual(tokens.map((t) => t.map(visibleToken)));
      expect(r[q].titles.every((t: string) => t.startsWith('token ')), q).toBe(true);
      expect(r[q].srTexts.length, q).toBe(7);
      expect(r[q].legend, q).toBeTruthy();
      expect(r[q].groupLabels[0], q).toMatch(/^Completion of 5 tokens coloured by /);
    }
    // Values follow the quantity chosen.
    expect(r.logprob.values).toEqual(['-0.1', '-2', '-4', '-0.5', '-1', '-3', '-0.2']);
    expect(r.entropy.values).toEqual(['0.2', '1.5', '3', '0.1', '0.4', '2', '0.3']);
    expect(r.advantage.values).toEqual(['0.9', '0.9', '0.9', '0.9', '0', '-0.6', '-0.6']);
    // The most surprising token has the full tint; the colours change with the quantity.
    const [pr, pg, pb] = parseHex(HEAT_COLORS.sequential);
    expect(r.logprob.backgrounds[2]).toBe(`rgb(${pr}, ${pg}, ${pb})`);
    expect(r.entropy.backgrounds).not.toEqual(r.logprob.backgrounds);
    expect(r.logprob.titles[2]).toBe(`token 3 ${JSON.stringify(PAYLOAD)}: log-prob -4 (p 0.018)`);
    expect(r.logprob.legend).toContain('-4 (most surprising)');
    // Out of the loss: struck through, and said so.
    expect(r.advantage.struck).toEqual([false, false, false, false, true, false, false]);
    expect(r.advantage.srTexts[4]).toBe(' (advantage × weight 0 (out of the loss))');
    expect(r.advantage.legend).toContain('-0.9');
    // num_iterations = 1: every ratio is 1, so nothing is tinted, and the note explains why.
    expect(r.ratio.ratioNote).toBe(true);
    expect(r.logprob.ratioNote).toBe(false);
    expect(new Set(r.ratio.backgrounds)).toEqual(new Set(['rgb(255, 255, 255)']));
    // The step saved before token data: plain text and the reason.
    expect(r.oldStep.spansPerRollout).toEqual([0]);
    expect(r.oldStep.plainTexts).toEqual(['old run text']);
    expect(r.oldStep.missing).toContain('predates token data');
    expect(r.oldStep.legend).toBeNull();
    // Tokens are text: no element, no script ran.
    expect(r.imgs).toBe(0);
    expect(r.scripts).toBe(0);
    expect(r.pwned).toBeNull();
    expect(harness.pageErrors).toEqual([]);
  });
});

describe('remote judge key holder (page)', () => {
  it('keeps the key in memory, stores it per origin only while "remember" is ticked, and says when it cannot', async () => {
    const r = await harness.runModule('/test/harness/cases/uiHeatmap.ts', 'judgeKeyActions', null);
    const slot = 'rubric-playground.judge-key:https://judge.example';
    expect(r.log).toEqual([
      { step: 'typed, not remembered', value: 'sk-first', remember: false, stored: {} },
      { step: 'remember ticked', value: 'sk-first', remember: true, stored: { [slot]: 'sk-first' } },
      { step: 'retyped while remembered', value: 'sk-second', remember: true, stored: { [slot]: 'sk-second' } },
      // Another site: the key typed for the first one is not shown (nor sent) for it, nor stored under it.
      { step: 'other origin', value: '', remember: false, stored: { [slot]: 'sk-second' } },
      { step: 'back to the first origin', value: 'sk-second', remember: true, stored: { [slot]: 'sk-second' } },
      { step: 'remember unticked', value: 'sk-second', remember: false, stored: {} },
      { step: 'remember without a valid url', value: '', remember: false, stored: {} },
    ]);
    expect(r.noUrlError).toContain('endpoint URL first');
    // Handed to a run only for its own origin, with that origin.
    expect(r.forRun).toEqual({ origin: 'https://judge.example', key: 'sk-second' });
    expect(r.forOther).toBeUndefined();
    expect(r.blank).toBeUndefined();
    expect(r.full.remember).toBe(false);
    expect(r.full.error).toContain('could not be remembered');
    expect(r.full.forRun).toEqual({ origin: 'https://judge.example', key: 'sk-x' });
  });
});
