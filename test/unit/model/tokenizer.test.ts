import { describe, expect, it } from 'vitest';
import { ByteTokenizer } from '../../../src/model/tokenizer';
import { HfTokenizer } from '../../../src/model/hfTokenizer';

describe('ByteTokenizer', () => {
  const tok = new ByteTokenizer();
  it('round-trips any text, including multi-byte characters', () => {
    for (const text of ['', 'Hello, world!', 'naïve café — 東京 🚀', '\n\t<script>']) {
      expect(tok.decode(tok.encode(text))).toBe(text);
    }
    expect(tok.encode('é')).toEqual([0xc3, 0xa9]);
  });
  it('drops special tokens and tolerates cut-off characters', () => {
    expect(tok.decode([tok.bosTokenId, 72, 105, tok.eosTokenId, tok.padTokenId])).toBe('Hi');
    expect(tok.decode([0xc3])).toBe('\ufffd');
  });
  it('rejects ids outside the vocabulary, naming the position', () => {
    expect(() => tok.decode([72, 300])).toThrow(/token id 300 at position 1/);
  });
});

/** A minimal GPT-2-style byte-level BPE tokenizer.json: 256 byte symbols, two merges, EOS. */
function tinyBpe() {
  const byteSymbols: string[] = [];
  // GPT-2's bytes_to_unicode table.
  const printable = [...range(33, 126), ...range(161, 172), ...range(174, 255)];
  let extra = 0;
  for (let b = 0; b < 256; b++) byteSymbols.push(String.fromCharCode(printable.includes(b) ? b : 256 + extra++));
  const vocab: Record<string, number> = {};
  byteSymbols.forEach((s, i) => (vocab[s] = i));
  vocab['he'] = 256;
  vocab['hel'] = 257;
  vocab['<|endoftext|>'] = 258;
  return {
    version: '1.0',
    added_tokens: [{ id: 258, content: '<|endoftext|>', special: true, single_word: false, lstrip: false, rstrip: false, normalized: false }],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', vocab, merges: ['h e', 'he l'], dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false },
  };
}

function range(a: number, b: number): number[] {
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
}

describe('HfTokenizer (tokenizer.json through @huggingface/transformers)', () => {
  it('encodes with the BPE merges and decodes back, dropping special tokens', async () => {
    const tok = await HfTokenizer.fromJson(tinyBpe(), { eos_token: '<|endoftext|>', model_max_length: 1024 }, 300);
    expect(tok.eosTokenId).toBe(258);
    expect(tok.padTokenId).toBe(258);
    expect(tok.vocabSize).toBe(300);
    const ids = tok.encode('hello');
    expect(ids[0]).toBe(257); // "hel"
    expect(ids).toHaveLength(3); // hel + l + o
    expect(tok.decode([...ids, 258])).toBe('hello');
    expect(tok.decode(tok.encode('héllo wörld'))).toBe('héllo wörld');
  });

  it('refuses a tokenizer without an EOS token', async () => {
    await expect(HfTokenizer.fromJson(tinyBpe(), {}, 300)).rejects.toThrow(/no eos_token/);
  });
});
