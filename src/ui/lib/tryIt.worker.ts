// Scores "Try it" off the main thread: a rubric's rules on a long response can take a second or
// more (re2js is linear but a link may carry 100 large patterns), and the page must stay
// responsive while the user types. One request at a time; the page terminates this worker when a
// request goes stale or runs past its time budget (see tryItScorer.ts).
import { tryResponse } from './tryIt';
import type { TryItReply, TryItRequest, TryItWorkerMessage } from './tryItScorer';

// The dedicated-worker scope (the project's types are the page's, where postMessage needs an origin).
const scope = self as unknown as { onmessage: ((event: MessageEvent<{ seq: number; request: TryItRequest }>) => void) | null; postMessage(message: TryItWorkerMessage): void };

scope.onmessage = (event) => {
  const { seq, request: r } = event.data;
  let reply: TryItReply;
  try {
    reply = { seq, ok: true, result: tryResponse(r.draft, r.rubric, r.config, r.prompt, r.response, r.answers) };
  } catch (e) {
    reply = { seq, ok: false, error: e instanceof Error ? e.message : String(e) };
  }
  scope.postMessage(reply);
};

// Loaded: the page starts the scoring budget from here (see tryItScorer.ts).
scope.postMessage({ ready: true });
