// The pairwise judge (judge_verdict "pairwise", issue 13; seed 000 #101 position bias): a model
// reads two responses to the same prompt in one prompt (src/rubric/judges/pairwisePrompt.ts) and
// says which meets the criterion better. The requests of one judge() call that share the rubric
// version, the prompt and the criterion are one group (a GRPO group: the rollouts of one prompt);
// every ordered pair of the group is asked, so each pair is judged in both orders and a judge
// that favours a slot shows it (src/rubric/pairwise.ts, judgeMeta.positionBias).
//
// The rule, exactly (pairwise.ts has the verdict of one comparison):
//   per group of n ≥ 2 requests (call order), for every i ≠ j: compare(first = i, second = j)
//   a rollout's score = (wins + ties / 2) / (its comparisons that were scored), both slots
//   its result keeps the comparisons where it was first (PairRecord: vs = j's place, winner, margin)
//   a group of one, or a rollout none of whose comparisons could be scored, is unscorable with the
//   reason (the first failure's)
// A rollout's score depends on the other rollouts of its group: the judge cache (one verdict per
// prompt, completion and criterion) is not used with this design (src/rl/context.ts).
// How a comparison is scored is the scorer's: the log-prob margin of "A" vs "B" on our engine
// (src/rl/pairwiseEngine.ts), or a remote endpoint's one-letter reply (completionPairScorer).
import { unscorable, type CriterionResult, type Judge, type JudgeOptions, type JudgeRequest } from './judge';
import { pairMessages, parsePairReply, type PairMaterial } from './judges/pairwisePrompt';
import { questionOf, type JudgeMessages } from './judges/modelJudgePrompt';
import { pairWinner, winShare, type PairRecord, type PairwiseResult } from './pairwise';

export type PairOutcome = { ok: true; margin: number } | { ok: false; reason: string };

/** Scores comparisons: one outcome per pair, in order; rejects only when `signal` aborts (or everything failed). */
export type PairScorer = (pairs: readonly PairMaterial[], options: { signal?: AbortSignal; onAnswered?: (done: number) => void }) => Promise<PairOutcome[]>;

/** The call's requests grouped for comparison (same rubric version, prompt and criterion), in call order. */
export function pairGroups(requests: readonly JudgeRequest[]): number[][] {
  const groups = new Map<string, number[]>();
  requests.forEach((r, i) => {
    const key = JSON.stringify([r.rubricVersion, r.prompt, r.criterion.id]);
    groups.set(key, [...(groups.get(key) ?? []), i]);
  });
  return [...groups.values()];
}

interface Tally {
  wins: number;
  ties: number;
  losses: number;
  firstWins: number;
  firstScored: number;
  failed: number;
  reason: string | null;
  records: PairRecord[];
}

/** The pairwise judge over a scorer: one result per request, per the rule above. */
export function pairwiseJudge(name: string, score: PairScorer): Judge {
  return {
    name,
    async judge(requests: readonly JudgeRequest[], options: JudgeOptions = {}): Promise<CriterionResult[]> {
      const results = new Array<CriterionResult>(requests.length);
      const pairs: PairMaterial[] = [];
      const slots: { group: number[]; a: number; b: number }[] = [];
      for (const group of pairGroups(requests)) {
        const id = requests[group[0]].criterion.id;
        try {
          questionOf(requests[group[0]]);
        } catch (e) {
          for (const i of group) results[i] = unscorable(id, (e as Error).message);
          continue;
        }
        if (group.length < 2) {
          results[group[0]] = unscorable(id, 'the pairwise judge compares responses to the same prompt, and this one had no other response to compare with');
          continue;
        }
        for (let a = 0; a < group.length; a++) {
          for (let b = 0; b < group.length; b++) {
            if (a === b) continue;
            pairs.push({ request: requests[group[a]], first: requests[group[a]].completion, second: requests[group[b]].completion });
            slots.push({ group, a, b });
          }
        }
      }
      const outcomes = pairs.length
        ? await score(pairs, {
            signal: options.signal,
            ...(options.onAnswered ? { onAnswered: (done: number) => options.onAnswered!(Math.floor((done / pairs.length) * requests.length)) } : {}),
          })
        : [];
      if (outcomes.length !== pairs.length) throw new Error(`the pairwise scorer returned ${outcomes.length} outcomes for ${pairs.length} comparisons`);
      const tallies = new Map<number, Tally>();
      const tally = (i: number) => {
        let t = tallies.get(i);
        if (!t) tallies.set(i, (t = { wins: 0, ties: 0, losses: 0, firstWins: 0, firstScored: 0, failed: 0, reason: null, records: [] }));
        return t;
      };
      outcomes.forEach((o, k) => {
        const { group, a, b } = slots[k];
        const first = tally(group[a]);
        const second = tally(group[b]);
        if (!o.ok || !Number.isFinite(o.margin)) {
          const reason = o.ok ? `the pairwise judge's margin is ${o.margin}` : o.reason;
          for (const t of [first, second]) {
            t.failed++;
            t.reason ??= reason;
          }
          return;
        }
        const winner = pairWinner(o.margin);
        first.records.push({ vs: b, winner, margin: o.margin });
        first.firstScored++;
        if (winner === 'tie') {
          first.ties++;
          second.ties++;
        } else {
          const [w, l] = winner === 'first' ? [first, second] : [second, first];
          w.wins++;
          l.losses++;
          if (winner === 'first') first.firstWins++;
        }
      });
      for (const [i, t] of tallies) {
        const id = requests[i].criterion.id;
        const n = t.wins + t.ties + t.losses;
        const share = winShare(t.wins, t.ties, n);
        if (share === null) {
          results[i] = unscorable(id, `no pairwise comparison could be scored: ${t.reason ?? 'none was asked'}`);
          continue;
        }
        const failed = t.failed ? `; ${t.failed} comparison${t.failed === 1 ? '' : 's'} unscorable (${t.reason})` : '';
        const reason = `pairwise: won ${t.wins}, tied ${t.ties}, lost ${t.losses} of ${n} comparisons (both orders); in the first slot won ${t.firstWins} of ${t.firstScored}${failed}`;
        const r: PairwiseResult = { criterion_id: id, status: 'ok', score: share, reason, pairwise: t.records };
        results[i] = r;
      }
      options.onAnswered?.(requests.length);
      return results;
    },
  };
}

/** Requests with judge_verdict "pairwise" go to `pairwise`, every other request to `inner`; one result per request, in order. */
export function withPairwise(inner: Judge, pairwise: Judge): Judge {
  return {
    name: inner.name,
    async judge(requests, options = {}) {
      const pick = requests.map((r) => r.design?.verdict === 'pairwise');
      if (!pick.some(Boolean)) return inner.judge(requests, options);
      if (pick.every(Boolean)) return pairwise.judge(requests, options);
      const idx = (want: boolean) => pick.flatMap((p, i) => (p === want ? [i] : []));
      const [others, pairs] = [idx(false), idx(true)];
      const out = new Array<CriterionResult>(requests.length);
      const a = await inner.judge(others.map((i) => requests[i]), { signal: options.signal });
      const b = await pairwise.judge(pairs.map((i) => requests[i]), { signal: options.signal });
      others.forEach((i, k) => (out[i] = a[k]));
      pairs.forEach((i, k) => (out[i] = b[k]));
      options.onAnswered?.(requests.length);
      return out;
    },
  };
}

/** Sends chat messages and returns the reply's text (a remote endpoint's complete()). */
export type CompleteMessages = (messages: JudgeMessages, options: { signal?: AbortSignal; maxTokens?: number }) => Promise<string>;

/**
 * A scorer on a text endpoint: each comparison is one request whose reply must be the letter A or
 * B (parsePairReply, strict); margin +1 for A, −1 for B; a malformed reply or a failed request is
 * that comparison's unscorable reason. `concurrency` requests at a time.
 */
export function completionPairScorer(complete: CompleteMessages, options: { concurrency?: number; maxTokens?: number } = {}): PairScorer {
  const concurrency = Math.max(1, options.concurrency ?? 4);
  return async (pairs, { signal, onAnswered }) => {
    const out = new Array<PairOutcome>(pairs.length);
    let next = 0;
    let done = 0;
    const lane = async () => {
      while (next < pairs.length) {
        const k = next++;
        if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new DOMException('the judge was stopped', 'AbortError');
        try {
          const reply = parsePairReply(await complete(pairMessages(pairs[k]), { signal, maxTokens: options.maxTokens ?? 16 }));
          out[k] = reply.ok ? { ok: true, margin: reply.winner === 'first' ? 1 : -1 } : reply;
        } catch (e) {
          if (signal?.aborted) throw e;
          out[k] = { ok: false, reason: `the pairwise judge's request failed: ${(e as Error)?.message ?? String(e)}` };
        }
        onAnswered?.(++done);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, pairs.length) }, lane));
    return out;
  };
}
