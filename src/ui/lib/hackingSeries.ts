// The reward-hacking charts (bias sandbox, issue 13): proxy vs gold reward with the hacking
// onset marked (src/rl/hackingOnset.ts), and the proxy − gold gap per shared criterion. Only for
// runs with a held-out (gold) rubric. Pure, so Node tests check it.
import type { StepMetrics } from '../../rl/grpoStep';
import { DEFAULT_ONSET_WINDOW, ONSET_RULE, proxyGoldGap, runHackingOnset } from '../../rl/hackingOnset';
import { PALETTE, smooth, type ChartData, type Value } from './series';

const num = (x: number | null | undefined): Value => (typeof x === 'number' && Number.isFinite(x) ? x : null);

export function hackingCharts(metrics: readonly StepMetrics[], weight: number): ChartData[] {
  if (!metrics.some((m) => m.held_out)) return [];
  const x = metrics.map((m) => m.step);
  const onset = runHackingOnset(metrics, DEFAULT_ONSET_WINDOW);
  const charts: ChartData[] = [
    {
      id: 'proxy-gold',
      title: 'Proxy vs gold reward (hacking onset)',
      unit: 'reward',
      lines: [
        { label: 'proxy (trained) reward', color: PALETTE[0] },
        { label: 'gold (held-out) reward', color: PALETTE[1], dash: true },
      ],
      x,
      // Raw per-step means: the onset rule is stated on them, so the chart shows what it judged.
      ys: [metrics.map((m) => num(m.rewards.reward)), metrics.map((m) => num(m.held_out?.reward))],
      ...(onset ? { marker: { x: onset.step, label: `hacking onset (step ${onset.step})` } } : {}),
      note: `${onset ? `Hacking onset at step ${onset.step}.` : 'No hacking onset so far.'} Rule: ${ONSET_RULE()}. Raw values (smoothing does not apply).`,
    },
  ];
  const ids = [...new Set(metrics.flatMap((m) => Object.keys(proxyGoldGap(m))))];
  if (ids.length) {
    const gaps = metrics.map(proxyGoldGap);
    charts.push({
      id: 'proxy-gold-gap',
      title: 'Proxy − gold gap by criterion',
      unit: 'mean proxy score minus mean gold score',
      lines: ids.map((id, i) => ({ label: id, color: PALETTE[i % PALETTE.length], dash: i >= PALETTE.length })),
      x,
      ys: ids.map((id) => smooth(gaps.map((g) => num(g[id])), weight)),
      note: 'Criteria both rubrics share (same id). Above 0: the trained judge credits it more than the gold judge does.',
    });
  }
  return charts;
}
