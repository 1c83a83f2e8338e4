// One tokenizer interface for the engine: a byte tokenizer for tiny models, and Hugging Face
// tokenizer.json tokenizers (hfTokenizer.ts) for real ones.

export interface Tokenizer {
  readonly vocabSize: number;
  readonly eosTokenId: number;
  readonly padTokenId: number;
  readonly bosTokenId: number | null;
  encode(text: string): number[];
  /** Special tokens are dropped; invalid byte sequences decode to U+FFFD, never throw. */
  decode(ids: ArrayLike<number>): string;
}

/**
 * UTF-8 bytes as tokens 0..255, plus BOS (256), EOS (257) and PAD (258). Any text round-trips;
 * a model sees 1-4 tokens per character.
 */
export class ByteTokenizer implements Tokenizer {
  readonly vocabSize = 259;
  readonly bosTokenId = 256;
  readonly eosTokenId = 257;
  readonly padTokenId = 258;
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder('utf-8', { fatal: false });

  encode(text: string): number[] {
    return Array.from(this.encoder.encode(text));
  }

  decode(ids: ArrayLike<number>): string {
    const bytes: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
        throw new RangeError(`token id ${id} at position ${i} is outside the byte vocabulary of ${this.vocabSize}`);
      }
      if (id < 256) bytes.push(id);
    }
    return this.decoder.decode(new Uint8Array(bytes));
  }
}
