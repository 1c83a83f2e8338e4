// The probe judge's data path (RunStore on fake-indexeddb): verdict labels + stored rollouts →
// training examples; the fitted probe kept with the rubric version; run files carry it.
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { parseExperiment } from '../../../src/rl/experiment';
import type { ProbeSet } from '../../../src/rubric/probeSet';
import { parseRubric } from '../../../src/rubric/schema';
import { readRunFile, runFileJson } from '../../../src/share/runFile';
import { RunStore } from '../../../src/store';
import { probeTrainingFromStore } from '../../../src/worker/probeTraining';
import { metrics, newRun, rollouts } from './fixtures';

let n = 0;
const opened: RunStore[] = [];
async function open(): Promise<RunStore> {
  const store = await RunStore.open({ name: `probe-${n++}`, storage: null });
  opened.push(store);
  return store;
}
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

const RUBRIC = parseRubric({
  name: 'probe',
  criteria: [
    { id: 'polite', text: 'Says please', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['please'] } },
    { id: 'kind', text: 'Is kind', weight: 1, tier: 'important', judge_question: 'Is the response kind?' },
  ],
});

const SET: ProbeSet = { judge_model: 'self', hidden_size: 3, l2: 1, probes: [{ criterion_id: 'kind', weights: [0.5, -1, 2], bias: 0.25, yes: 3, no: 3 }] };

describe('probe judge data', () => {
  it('joins verdict labels with the stored rollouts, and keeps the fitted probe with the rubric version', async () => {
    const store = await open();
    const run = await store.createRun(newRun({ rubric: RUBRIC }));
    const v = run.experiment.rubricVersion;
    await store.commitStep(run.id, 0, metrics(0), rollouts(0));
    const key = (g: number, i: number) => `${run.id}/0/${g}/${i}`;
    await store.labelVerdict(v, { rollout: key(0, 0), criterion: 'kind', score: 0.9 }, true); // yes
    await store.labelVerdict(v, { rollout: key(0, 1), criterion: 'kind', score: 0.9 }, false); // no
    await store.labelVerdict(v, { rollout: key(1, 0), criterion: 'kind', score: 0.1 }, false); // yes
    await store.labelVerdict(v, { rollout: key(1, 0), criterion: 'polite', score: 1 }, true); // a rule: not the probe's
    await store.labelVerdict(v, { rollout: `${run.id}/7/0/0`, criterion: 'kind', score: 1 }, true); // no such rollout
    await store.labelVerdict(v, { rollout: `gone/0/0/0`, criterion: 'kind', score: 1 }, true); // no such run
    const stored = rollouts(0);
    const training = await probeTrainingFromStore(store, v, RUBRIC);
    expect(training.examples).toEqual([
      { criterion_id: 'kind', prompt: stored[0].prompt, completion: stored[0].completion, target: true },
      { criterion_id: 'kind', prompt: stored[1].prompt, completion: stored[1].completion, target: false },
      { criterion_id: 'kind', prompt: stored[2].prompt, completion: stored[2].completion, target: true },
    ]);
    expect(await store.probe(v)).toBeNull();
    await training.onTrained!(SET);
    expect(await store.probe(v)).toEqual(SET);
    // Labels stay as they were.
    expect((await store.labels(v)).verdicts).toHaveLength(6);
    await expect(store.saveProbe('0'.repeat(64), SET)).rejects.toThrow(/is not stored/);
  });

  it('a run file carries the probe and checks its size; a link never does', async () => {
    const experiment = parseExperiment({ model: 'm', prompts: ['p'], rubric: RUBRIC, judge: { kind: 'probe', l2: 2 } }).experiment;
    expect(experiment.judge).toEqual({ kind: 'probe', l2: 2 });
    const file = { name: 'b', exported_at: '2025-01-02T03:04:05.000Z', experiment, metrics: [], rollouts: [] };
    expect((await readRunFile(await runFileJson({ ...file, probe: SET }))).probe).toEqual(SET);
    expect((await readRunFile(await runFileJson(file))).probe).toBeUndefined();
    const bad = { ...SET, probes: [{ ...SET.probes[0], weights: [1, 2] }] };
    await expect(readRunFile(await runFileJson({ ...file, probe: bad }))).rejects.toThrow(/criterion "kind": 2 weights for hidden states of size 3/);
    // The experiment (what links carry) has no place for weights.
    expect(() => parseExperiment({ model: 'm', prompts: ['p'], rubric: RUBRIC, judge: { kind: 'probe', probes: SET.probes } })).toThrow(/judge/);
  });
});

describe('probe judge design', () => {
  it('is refused with a generative verdict, a checklist or evidence-required credit, saying why', () => {
    const probe = { model: 'm', prompts: ['p'], rubric: RUBRIC, judge: { kind: 'probe' } };
    expect(() => parseExperiment({ ...probe, config: { judge_verdict: 'generative' } })).toThrow(/cannot run on the probe judge/);
    expect(() => parseExperiment({ ...probe, config: { judge_scope: 'checklist' } })).toThrow(/judge_scope "checklist"/);
    expect(() => parseExperiment({ ...probe, config: { judge_evidence_required: true } })).toThrow(/the "probe" judge scores P\("yes"\) and writes no quote/);
  });

  it('the TRL export says the probe is not exported', async () => {
    const { exportToTrl } = await import('../../../src/share/trlExport');
    const base = { model: 'embedded/tiny-gpt2-byte', prompts: ['p'], rubric: RUBRIC };
    expect((await exportToTrl({ ...base, judge: { kind: 'probe' } })).notes.join('\n')).toMatch(/judge "probe" .* is not exported/);
    expect((await exportToTrl({ ...base, judge: { kind: 'self' } })).notes.join('\n')).not.toMatch(/probe/);
  });
});

describe('buildJudge probe', () => {
  it('refuses too few labels, naming the criterion, before any model is loaded', async () => {
    const { buildJudge } = await import('../../../src/rl/judgeFactory');
    const { ProbeLabelError } = await import('../../../src/rubric/probeLabels');
    // No GPU runtime and no model files: reaching either would throw something else.
    const sources = {
      policyFiles: null as never,
      fetchModel: () => Promise.reject(new Error('fetched a model')),
      probe: {
        examples: [true, true, true, false, false].map((target) => ({ criterion_id: 'kind', prompt: 'p', completion: 'c', target })),
        rubric: RUBRIC,
        rubricVersion: 'v',
        criteria: ['kind'],
      },
    };
    const err = await buildJudge(null as never, { kind: 'probe', model: 'other' }, sources).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProbeLabelError);
    expect((err as Error).message).toMatch(/^criterion "kind": the probe judge needs at least 3 "yes" and 3 "no" labels to be trained, it has 3 yes and 2 no/);
    await expect(buildJudge(null as never, { kind: 'probe' }, { ...sources, probe: undefined })).rejects.toThrow(/trained from the labels stored with the rubric version/);
  });
});
