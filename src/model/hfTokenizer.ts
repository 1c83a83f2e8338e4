// Hugging Face tokenizers (tokenizer.json + tokenizer_config.json) through
// @huggingface/transformers, behind the engine's Tokenizer interface.
import type { Tokenizer } from './tokenizer';

type Json = Record<string, unknown>;

interface HfTokenizerLike {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
  decode(ids: number[], options?: { skip_special_tokens?: boolean }): string;
  model: { vocab: unknown; tokens_to_ids?: Map<string, number> };
  eos_token_id?: number | null;
  pad_token_id?: number | null;
  bos_token_id?: number | null;
  apply_chat_template?(messages: { role: string; content: string }[], options: Json): unknown;
}

export class HfTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly eosTokenId: number;
  readonly padTokenId: number;
  readonly bosTokenId: number | null;

  private constructor(
    private readonly inner: HfTokenizerLike,
    vocabSize: number,
  ) {
    this.vocabSize = vocabSize;
    const eos = inner.eos_token_id;
    if (eos == null) throw new Error('tokenizer_config.json names no eos_token, so generation could never stop');
    this.eosTokenId = eos;
    this.padTokenId = inner.pad_token_id ?? eos;
    this.bosTokenId = inner.bos_token_id ?? null;
  }

  /**
   * Builds a tokenizer from parsed tokenizer.json and tokenizer_config.json. `vocabSize` is the
   * model's embedding rows (config.json vocab_size), which may exceed the tokenizer's vocabulary.
   */
  static async fromJson(tokenizerJson: Json, tokenizerConfig: Json, vocabSize: number): Promise<HfTokenizer> {
    const { PreTrainedTokenizer } = await import('@huggingface/transformers');
    const inner = new PreTrainedTokenizer(tokenizerJson, tokenizerConfig) as unknown as HfTokenizerLike;
    return new HfTokenizer(inner, vocabSize);
  }

  encode(text: string): number[] {
    return this.inner.encode(text, { add_special_tokens: false });
  }

  decode(ids: ArrayLike<number>): string {
    return this.inner.decode(Array.from(ids), { skip_special_tokens: true });
  }

  /** The chat template of an instruct model applied to one user turn, ready for generation. */
  chatPrompt(userText: string): string {
    if (!this.inner.apply_chat_template) throw new Error('this tokenizer has no chat template');
    return String(
      this.inner.apply_chat_template([{ role: 'user', content: userText }], { tokenize: false, add_generation_prompt: true }),
    );
  }
}
