// Page side of test/browser/ui.test.ts: mounts the rollout inspector on rollouts whose prompt,
// completion and judge reasons carry HTML/script payloads, and reports what the DOM holds.
import { flushSync, mount, unmount } from 'svelte';
import type { RolloutRecord } from '../../../src/rl/grpoStep';
import { TrainingSession } from '../../../src/ui/lib/session.svelte';
import RolloutInspector from '../../../src/ui/run/RolloutInspector.svelte';

interface Input {
  prompt: string;
  completions: string[];
}

const RUBRIC = {
  name: 'hostile',
  criteria: [
    { id: 'short', text: 'At most 5 words', weight: 1, tier: 'important', rule: { kind: 'length', unit: 'words', max: 5 } },
    { id: 'has_img', text: 'Mentions <img src=x onerror=alert(1)>', weight: 1, tier: 'optional', rule: { kind: 'contains', terms: ['<img'] } },
  ],
};

function rollout(step: number, index: number, prompt: string, completion: string, shortOk: boolean, hasImg: boolean): RolloutRecord {
  return {
    step,
    group: 0,
    index,
    prompt,
    completion,
    completion_ids: [],
    logprobs: [],
    truncated: false,
    results: [
      { criterion_id: 'short', status: 'ok', score: shortOk ? 1 : 0, reason: shortOk ? 'within max 5' : 'above max 5' },
      { criterion_id: 'has_img', status: 'ok', score: hasImg ? 1 : 0, reason: hasImg ? `found ${JSON.stringify('<img')}` : 'not found' },
    ],
    scores: [shortOk ? 1 : 0, hasImg ? 1 : 0],
    reward: (Number(shortOk) + Number(hasImg)) / 2,
    advantage: shortOk ? 0.7 : -0.7,
  };
}

export async function hostileRollouts(_rt: unknown, input: Input) {
  const target = document.createElement('div');
  document.body.append(target);
  const session = new TrainingSession();
  session.runExperiment = { model: 'x', prompts: [input.prompt], rubric: RUBRIC, config: {} };
  for (const step of [0, 1]) {
    session.history.add(
      step,
      input.completions.map((c, i) => rollout(step, i, input.prompt, c, i % 2 === 0, c.includes('<img'))),
    );
  }
  session.historyVersion++;
  const app = mount(RolloutInspector, { target, props: { session } });
  flushSync();
  // Let any injected markup (an <img onerror>, a <script>) get its chance to run.
  await new Promise((r) => setTimeout(r, 300));
  const completions = [...target.querySelectorAll('[data-testid=completion]')].map((e) => e.textContent);
  const headings = [...target.querySelectorAll('h3')].map((e) => e.textContent);
  const tooltips = [...target.querySelectorAll('[role=tooltip]')].map((e) => e.textContent);
  const chips = [...target.querySelectorAll('[data-testid=chip]')].map((e) => e.getAttribute('data-verdict'));
  const before = target.querySelectorAll('[data-testid=rollout]').length;

  // Filter: only completions failing "short".
  const filter = target.querySelector<HTMLSelectElement>('[data-testid=filter-failed]')!;
  filter.value = 'short';
  filter.dispatchEvent(new Event('change'));
  flushSync();
  const failingShort = target.querySelectorAll('[data-testid=rollout]').length;

  // The same prompt across steps: one group per kept step.
  filter.value = '';
  filter.dispatchEvent(new Event('change'));
  const across = target.querySelector<HTMLInputElement>('input[type=radio][value=prompt]')!;
  across.click();
  flushSync();
  const acrossHeadings = [...target.querySelectorAll('h3')].map((e) => e.textContent?.trim().split(':')[0]);

  const result = {
    completions,
    headings,
    tooltips,
    chips,
    before,
    failingShort,
    acrossHeadings,
    imgs: document.querySelectorAll('img').length,
    scripts: target.querySelectorAll('script').length,
    pwned: (window as unknown as { __pwned?: unknown }).__pwned ?? null,
  };
  unmount(app);
  session.dispose();
  target.remove();
  return result;
}
