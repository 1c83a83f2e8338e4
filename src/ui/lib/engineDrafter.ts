// Drafting a rubric with a model on our engine (the rubric lab, issue 12): a judge worker of its
// own loads the model (Hub, a folder this page serves, picked files, or the embedded model) on
// its own GPU runtime, and answers the generation prompts with complete(). The page never touches
// the GPU: it talks to the worker through judgeClient. The worker is started on first use, kept
// while the same model is asked again, and replaced when another model is chosen.
// Each completion is remembered (last), so the page can say what the model could see when its
// reply was not a usable rubric (a small model's context cannot hold the request).
import type { Complete } from '../../rubric/generate';
import { completionLimits, type EngineCompletion } from '../../rl/engineComplete';
import type { JudgeWorkerClient, JudgeModelConfig } from '../../worker/judgeClient';

/** Reply tokens asked of the engine (the remote endpoint gets the same budget). */
export const DRAFT_REPLY_TOKENS = 1500;

export class EngineDrafter {
  private client: JudgeWorkerClient | null = null;
  private loaded: Promise<JudgeWorkerClient> | null = null;
  private key = '';
  private seed = 0;
  /** The latest completion: what the model saw and whether its reply ran out of tokens. */
  last: EngineCompletion | null = null;

  constructor(private readonly start: () => JudgeWorkerClient) {}

  /** The worker with `model` loaded (started and configured on first use; reused for the same model). */
  private ready(model: JudgeModelConfig): Promise<JudgeWorkerClient> {
    const key = `${model.modelId}\n${model.hubEndpoint ?? ''}\n${model.localFiles?.length ?? 0}`;
    if (this.loaded && this.key === key) return this.loaded;
    this.release();
    const client = this.start();
    this.client = client;
    this.key = key;
    const loaded = client.configure({ model }).then(() => client);
    this.loaded = loaded;
    loaded.catch(() => {
      // A model that cannot load: the next try starts afresh.
      if (this.client === client) this.release();
    });
    return loaded;
  }

  /**
   * A `complete` callback on `model`; `temperature` > 0 samples (each call its own seed, so
   * sampled drafts differ), otherwise greedy.
   */
  completer(model: JudgeModelConfig, temperature = 0): Complete {
    return async (messages, options) => {
      if (options?.signal?.aborted) throw options.signal.reason ?? new DOMException('cancelled', 'AbortError');
      const client = await this.ready(model);
      const out = await client.complete(messages, { maxTokens: DRAFT_REPLY_TOKENS, temperature, seed: temperature > 0 ? ++this.seed : 0 });
      this.last = out;
      return out.text;
    };
  }

  /** What to say next to a failed draft: the last completion's limits (empty when none). */
  limits(): string[] {
    return this.last ? completionLimits(this.last) : [];
  }

  /** Stops the worker (its GPU runtime and the model's weights go with it). */
  release(): void {
    this.client?.terminate();
    this.client = null;
    this.loaded = null;
    this.key = '';
  }
}
