// Page side of test/browser/appHeatmap.test.ts: mounts the rollout inspector on rollouts with
// per-token data (tokens carrying HTML payloads and line breaks) next to a step saved without
// it, switches the heatmap's quantity and reports what the DOM shows; and exercises the remote
// judge's key holder against a storage double.
import { flushSync, mount, unmount } from 'svelte';
import type { RolloutRecord } from '../../../src/rl/grpoStep';
import { JudgeApiKey } from '../../../src/ui/lib/judgeKey.svelte';
import { TrainingSession } from '../../../src/ui/lib/session.svelte';
import RolloutInspector from '../../../src/ui/run/RolloutInspector.svelte';

type TokenFields = Pick<RolloutRecord, 'tokens' | 'token_entropy' | 'token_ratio' | 'token_weight'>;

export interface HeatmapInput {
  tokens: string[][];
  logprobs: number[][];
  entropy: number[][];
  ratio: number[][];
  weight: number[][];
  advantages: number[];
  num_iterations: number;
}

const RUBRIC = { name: 'r', criteria: [{ id: 'short', text: 'Short', weight: 1, tier: 'important', rule: { kind: 'length', unit: 'words', max: 5 } }] };

function rollout(step: number, index: number, completion: string, advantage: number, logprobs: number[], fields: TokenFields): RolloutRecord {
  return {
    step,
    group: 0,
    index,
    prompt: 'Say something.',
    completion,
    completion_ids: logprobs.map((_, i) => i),
    logprobs,
    truncated: false,
    results: [{ criterion_id: 'short', status: 'ok', score: 1, reason: 'ok' }],
    scores: [1],
    reward: 1,
    advantage,
    ...fields,
  };
}

const select = (root: HTMLElement, testId: string, value: string) => {
  const el = root.querySelector<HTMLSelectElement>(`[data-testid=${testId}]`)!;
  el.value = value;
  el.dispatchEvent(new Event('change'));
  flushSync();
};

function snapshot(target: HTMLElement) {
  const rollouts = [...target.querySelectorAll('[data-testid=rollout]')];
  return {
    spansPerRollout: rollouts.map((r) => r.querySelectorAll('[data-testid=token]').length),
    plainTexts: rollouts.map((r) => r.querySelector('[data-testid=completion]')?.textContent ?? null),
    /** Each token's own text (without the screen-reader value). */
    tokenTexts: rollouts.map((r) => [...r.querySelectorAll('[data-testid=token]')].map((t) => t.firstChild?.textContent ?? '')),
    titles: [...target.querySelectorAll('[data-testid=token]')].map((t) => t.getAttribute('title')),
    values: [...target.querySelectorAll('[data-testid=token]')].map((t) => t.getAttribute('data-value')),
    backgrounds: [...target.querySelectorAll<HTMLElement>('[data-testid=token]')].map((t) => t.style.backgroundColor),
    struck: [...target.querySelectorAll('[data-testid=token]')].map((t) => t.classList.contains('out')),
    srTexts: [...target.querySelectorAll('[data-testid=token] .sr-only')].map((t) => t.textContent),
    legend: target.querySelector('[data-testid=heat-legend]')?.textContent?.replace(/\s+/g, ' ').trim() ?? null,
    ratioNote: target.querySelector('[data-testid=heat-ratio-note]') !== null,
    missing: target.querySelector('[data-testid=heat-missing]')?.textContent ?? null,
    groupLabels: [...target.querySelectorAll('[data-testid=heatmap]')].map((h) => h.getAttribute('aria-label')),
  };
}

/** The inspector on step 1 (with token data) and step 0 (saved before token data existed). */
export async function heatmapInspector(_rt: unknown, input: HeatmapInput) {
  const target = document.createElement('div');
  document.body.append(target);
  const session = new TrainingSession();
  session.runExperiment = { model: 'x', prompts: ['Say something.'], rubric: RUBRIC, config: { num_iterations: input.num_iterations } };
  session.history.add(0, [rollout(0, 0, 'old run text', 0.5, [-1, -2], {})]);
  session.history.add(
    1,
    input.tokens.map((tokens, i) =>
      rollout(1, i, tokens.join(''), input.advantages[i], input.logprobs[i], {
        tokens,
        token_entropy: input.entropy[i],
        token_ratio: input.ratio[i],
        token_weight: input.weight[i],
      }),
    ),
  );
  session.historyVersion++;
  const app = mount(RolloutInspector, { target, props: { session } });
  flushSync();
  const out: Record<string, ReturnType<typeof snapshot>> = { plain: snapshot(target) };
  for (const q of ['logprob', 'entropy', 'ratio', 'advantage']) {
    select(target, 'heat-quantity', q);
    out[q] = snapshot(target);
  }
  // The older step: no token data, so plain text and a message saying why.
  const step = target.querySelector<HTMLSelectElement>('select[id$=-step]')!;
  step.value = '0';
  step.dispatchEvent(new Event('change'));
  flushSync();
  out.oldStep = snapshot(target);
  await new Promise((r) => setTimeout(r, 200));
  const result = {
    ...out,
    imgs: target.querySelectorAll('img').length,
    scripts: target.querySelectorAll('script').length,
    pwned: (window as unknown as { __pwned?: unknown }).__pwned ?? null,
  };
  unmount(app);
  session.dispose();
  target.remove();
  return result;
}

/** A Storage double that records what is written (the test reads it back). */
class MemoryStorage implements Storage {
  readonly items = new Map<string, string>();
  get length() {
    return this.items.size;
  }
  clear() {
    this.items.clear();
  }
  getItem(key: string) {
    return this.items.get(key) ?? null;
  }
  key(i: number) {
    return [...this.items.keys()][i] ?? null;
  }
  removeItem(key: string) {
    this.items.delete(key);
  }
  setItem(key: string, value: string) {
    this.items.set(key, value);
  }
}

/** Storage that refuses every write (quota exceeded, blocked). */
class FullStorage extends MemoryStorage {
  override setItem(): void {
    throw new DOMException('the quota has been exceeded', 'QuotaExceededError');
  }
}

/** The key holder through a user's actions; each entry: what memory and storage hold after it. */
export function judgeKeyActions() {
  const storage = new MemoryStorage();
  const key = new JudgeApiKey(storage);
  const log: { step: string; value: string; remember: boolean; stored: Record<string, string> }[] = [];
  const note = (step: string) => log.push({ step, value: key.value, remember: key.remember, stored: Object.fromEntries(storage.items) });
  key.follow('https://judge.example/v1/chat/completions');
  key.set('sk-first');
  note('typed, not remembered');
  key.setRemember(true);
  note('remember ticked');
  key.set('sk-second');
  note('retyped while remembered');
  key.follow('http://localhost:8000/v1');
  note('other origin');
  key.follow('https://judge.example/other/path');
  note('back to the first origin');
  key.setRemember(false);
  note('remember unticked');
  key.follow('not a url');
  key.setRemember(true);
  note('remember without a valid url');
  const noUrlError = key.error;

  const full = new JudgeApiKey(new FullStorage());
  full.follow('https://judge.example/v1');
  full.set('sk-x');
  full.setRemember(true);
  return {
    log,
    noUrlError,
    forRun: key.forRun('https://judge.example/v1'),
    forOther: key.forRun('http://localhost:8000/v1'),
    blank: new JudgeApiKey(new MemoryStorage()).forRun('https://judge.example/v1'),
    full: { remember: full.remember, error: full.error, forRun: full.forRun('https://judge.example/v1') },
  };
}
