// A teacher model must share the student's tokenizer: the divergence compares the two next-token
// distributions id by id, so the same id must be the same token in both, and the teacher must read
// the student's completion ids as the same text. Checked on the model files before any weight is
// loaded; the first difference is named in the page's words.

/** The parts of a model's files the check reads (src/model/load.ts ModelFiles). */
export interface TokenizerFiles {
  config: Record<string, unknown>;
  tokenizerJson?: Record<string, unknown>;
  tokenizerConfig?: Record<string, unknown>;
}

const SPECIAL_KEYS = ['bos_token', 'eos_token', 'pad_token', 'unk_token'] as const;

const byteTokenizer = (f: TokenizerFiles) => (f.config as { rubric_playground?: { tokenizer?: string } }).rubric_playground?.tokenizer === 'byte';
const vocabSize = (f: TokenizerFiles) => (typeof f.config.vocab_size === 'number' ? f.config.vocab_size : null);

/** token → id of a tokenizer.json model (BPE/WordPiece: an object; Unigram: a list of [token, score]). */
function vocabOf(json: Record<string, unknown> | undefined): Map<string, number> | null {
  const vocab = (json?.model as { vocab?: unknown } | undefined)?.vocab;
  if (Array.isArray(vocab)) return new Map(vocab.map((entry, id) => [String(Array.isArray(entry) ? entry[0] : entry), id]));
  if (vocab && typeof vocab === 'object') return new Map(Object.entries(vocab as Record<string, number>));
  return null;
}

/** Added tokens by id: their text and whether they are special. */
function addedOf(json: Record<string, unknown> | undefined): Map<number, { content: string; special: boolean }> {
  const added = Array.isArray(json?.added_tokens) ? (json!.added_tokens as { id?: number; content?: string; special?: boolean }[]) : [];
  return new Map(added.filter((t) => typeof t.id === 'number').map((t) => [t.id!, { content: String(t.content), special: t.special === true }]));
}

/** A special token's text from tokenizer_config.json (a string, or an AddedToken object). */
function specialText(config: Record<string, unknown> | undefined, key: string): string | null {
  const v = config?.[key];
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string') return (v as { content: string }).content;
  return null;
}

const quote = (s: string) => JSON.stringify(s);

/**
 * Null when the teacher's tokenizer is the student's; otherwise the first difference, as a
 * sentence that names it (vocabulary size, a token, an added or special token).
 */
export function tokenizerMismatch(student: TokenizerFiles, teacher: TokenizerFiles): string | null {
  const prefix = 'the teacher model must use the student\'s tokenizer';
  if (byteTokenizer(student) !== byteTokenizer(teacher)) {
    const kind = (f: TokenizerFiles) => (byteTokenizer(f) ? 'the byte tokenizer' : 'a tokenizer.json tokenizer');
    return `${prefix}: the teacher uses ${kind(teacher)}, the student ${kind(student)}`;
  }
  const vs = vocabSize(student);
  const vt = vocabSize(teacher);
  if (vs !== vt) return `${prefix}: the teacher's vocabulary has ${vt ?? 'an unknown number of'} entries (vocab_size), the student's ${vs ?? 'an unknown number'}`;
  if (byteTokenizer(student)) return null;
  const a = vocabOf(student.tokenizerJson);
  const b = vocabOf(teacher.tokenizerJson);
  if (!a || !b) return `${prefix}: ${!b ? 'the teacher' : 'the student'} has no tokenizer.json vocabulary to compare`;
  if (a.size !== b.size) return `${prefix}: the teacher's tokenizer.json has ${b.size} tokens, the student's ${a.size}`;
  for (const [token, id] of a) {
    const other = b.get(token);
    if (other !== id) return `${prefix}: token ${quote(token)} is id ${id} for the student and ${other === undefined ? 'missing' : `id ${other}`} for the teacher`;
  }
  const addedA = addedOf(student.tokenizerJson);
  const addedB = addedOf(teacher.tokenizerJson);
  for (const [id, t] of addedA) {
    const u = addedB.get(id);
    if (!u) return `${prefix}: the student's added token ${quote(t.content)} (id ${id}) is missing from the teacher's`;
    if (u.content !== t.content || u.special !== t.special) {
      return `${prefix}: added token id ${id} is ${quote(t.content)}${t.special ? ' (special)' : ''} for the student and ${quote(u.content)}${u.special ? ' (special)' : ''} for the teacher`;
    }
  }
  for (const [id, u] of addedB) if (!addedA.has(id)) return `${prefix}: the teacher's added token ${quote(u.content)} (id ${id}) is missing from the student's`;
  for (const key of SPECIAL_KEYS) {
    const s = specialText(student.tokenizerConfig, key);
    const t = specialText(teacher.tokenizerConfig, key);
    if (s !== t) return `${prefix}: ${key} is ${s === null ? 'not set' : quote(s)} for the student and ${t === null ? 'not set' : quote(t)} for the teacher`;
  }
  return null;
}
