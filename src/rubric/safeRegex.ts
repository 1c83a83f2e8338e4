// Regular expressions from rubric authors, made safe to run on model output.
//
// Why not just `new RegExp(pattern).test(text)`: JavaScript's engine backtracks, and a pattern
// like (a+)+$ takes exponential time on "aaaa…b"; even a harmless-looking .*a.*b.*c takes cubic
// time (measured: 24 s on 4,000 characters). A rubric is shared data, so the page must not hang
// on whatever pattern a link carries. Three layers:
//  1. Static rejection (clear message, before training starts): pattern length <= 200, flags from
//     {i, m, s, u}, no backreferences or lookaround, no variable quantifier inside a repeated group
//     ((a+)+, (\w*,)*, (x?){3}), and a bounded size once counted repetitions are expanded. These are
//     the common exponential shapes; rejecting them also keeps most rubrics safe when exported
//     to a backtracking engine elsewhere (Python `re`, a cluster trainer). Alternation inside a
//     repeat, (cat|dog)+, is accepted: harmless here, though an ambiguous one like (a|a)+ stays
//     slow in backtracking engines, which no simple static rule can tell apart.
//  2. Matching with our own Pike VM (Thompson NFA simulation, leftmost-first priorities like
//     JavaScript, including its rule that an optional iteration matching "" fails): time
//     O(input length x program size) for every accepted pattern, so no pattern can hang the
//     page — polynomial backtracking included, which static checks cannot see.
//     Single-character tests (literals, classes, \d, \p{L}, ., case folding) are delegated to the
//     native engine on one character at a time, so their meaning is exactly JavaScript's.
//  3. An input-length cap (the rule's max_input_chars) bounding the linear cost.
// The native constructor still validates the syntax first, so error messages for invalid
// patterns are the engine's own.

export const MAX_PATTERN_LENGTH = 200;
export const ALLOWED_FLAGS = 'imsu';
/**
 * Instructions after expanding counted repetitions; bounds the per-character cost. At 1000 the
 * worst accepted pattern (e.g. a{0,450}b) takes about 0.25 s on 10,000 characters on a slow core.
 */
export const MAX_PROGRAM_SIZE = 1000;
/** Largest count in {n,m}. */
export const MAX_REPEAT_COUNT = 1000;

/** A pattern that is invalid or unsafe; the message says which and why. */
export class RegexRejected extends Error {
  override name = 'RegexRejected';
}

type Assertion = 'start' | 'end' | 'word' | 'nonword';

type Node =
  | { type: 'char'; source: string }
  | { type: 'assert'; kind: Assertion }
  | { type: 'seq'; items: Node[] }
  | { type: 'alt'; options: Node[] }
  | { type: 'repeat'; body: Node; min: number; max: number; greedy: boolean; from: number; to: number };

const SYNTAX_CHARS = '^$\\.*+?()[]{}|/';
const SIMPLE_ESCAPES = 'dDwWsStnrvf';

function isHex(s: string): boolean {
  return s.length > 0 && /^[0-9a-fA-F]+$/.test(s);
}

class Parser {
  pos = 0;

  constructor(
    private readonly src: string,
    private readonly unicode: boolean,
  ) {}

  parse(): Node {
    const node = this.alternation();
    // The native constructor accepted the pattern, so an unmatched ')' cannot occur.
    if (this.pos !== this.src.length) throw new RegexRejected(`unexpected "${this.src[this.pos]}" at ${this.pos}`);
    return node;
  }

  private alternation(): Node {
    const options = [this.sequence()];
    while (this.src[this.pos] === '|') {
      this.pos++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0] : { type: 'alt', options };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.pos < this.src.length && this.src[this.pos] !== '|' && this.src[this.pos] !== ')') {
      const from = this.pos;
      const atom = this.atom();
      const q = this.quantifier();
      if (q === null) {
        items.push(atom);
        continue;
      }
      if (atom.type === 'assert') throw new RegexRejected(`nothing to repeat at ${from}`);
      items.push({ type: 'repeat', body: atom, ...q, from, to: this.pos });
    }
    return items.length === 1 ? items[0] : { type: 'seq', items };
  }

  private quantifier(): { min: number; max: number; greedy: boolean } | null {
    const c = this.src[this.pos];
    let min: number;
    let max: number;
    if (c === '*' || c === '+' || c === '?') {
      this.pos++;
      [min, max] = c === '*' ? [0, Infinity] : c === '+' ? [1, Infinity] : [0, 1];
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.pos));
      if (!m) return null; // a literal '{' (allowed without the u flag)
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      if (min > MAX_REPEAT_COUNT || (max !== Infinity && max > MAX_REPEAT_COUNT)) {
        throw new RegexRejected(`repetition count above ${MAX_REPEAT_COUNT} in "${m[0]}"`);
      }
      this.pos += m[0].length;
    } else {
      return null;
    }
    let greedy = true;
    if (this.src[this.pos] === '?') {
      greedy = false;
      this.pos++;
    }
    return { min, max, greedy };
  }

  private atom(): Node {
    const src = this.src;
    const c = src[this.pos];
    if (c === '(') return this.group();
    if (c === '^' || c === '$') {
      this.pos++;
      return { type: 'assert', kind: c === '^' ? 'start' : 'end' };
    }
    if (c === '.') {
      this.pos++;
      return { type: 'char', source: '.' };
    }
    if (c === '[') return this.characterClass();
    if (c === '\\') return this.escape();
    if (c === '*' || c === '+' || c === '?') throw new RegexRejected(`nothing to repeat at ${this.pos}`);
    // A literal: one code point with the u flag, one UTF-16 unit without.
    const cp = this.unicode ? String.fromCodePoint(src.codePointAt(this.pos) ?? 0) : c;
    this.pos += cp.length;
    return { type: 'char', source: SYNTAX_CHARS.includes(cp) ? `\\${cp}` : cp };
  }

  private group(): Node {
    const src = this.src;
    this.pos++; // '('
    if (src.startsWith('?=', this.pos) || src.startsWith('?!', this.pos) || src.startsWith('?<=', this.pos) || src.startsWith('?<!', this.pos)) {
      throw new RegexRejected('lookahead and lookbehind are not supported');
    }
    if (src.startsWith('?:', this.pos)) {
      this.pos += 2;
    } else if (src.startsWith('?<', this.pos)) {
      this.pos = src.indexOf('>', this.pos) + 1; // a named group: the name is irrelevant here
    } else if (src[this.pos] === '?') {
      throw new RegexRejected(`unsupported group syntax "(${src.slice(this.pos, this.pos + 3)}" at ${this.pos - 1}`);
    }
    const body = this.alternation();
    if (src[this.pos] !== ')') throw new RegexRejected(`unterminated group at ${this.pos}`);
    this.pos++;
    // A group may be repeated even when it holds only an assertion: (\b)* is valid.
    return body.type === 'assert' ? { type: 'seq', items: [body] } : body;
  }

  private characterClass(): Node {
    // Without the v flag classes do not nest: the class ends at the first unescaped ']'.
    const src = this.src;
    let i = this.pos + 1;
    if (src[i] === '^') i++;
    while (i < src.length && src[i] !== ']') i += src[i] === '\\' ? 2 : 1;
    const source = src.slice(this.pos, i + 1);
    this.pos = i + 1;
    return { type: 'char', source };
  }

  private escape(): Node {
    const src = this.src;
    const at = this.pos;
    const c = src[at + 1];
    const take = (n: number): Node => {
      this.pos = at + n;
      return { type: 'char', source: src.slice(at, at + n) };
    };
    if (c === 'b' || c === 'B') {
      this.pos = at + 2;
      return { type: 'assert', kind: c === 'b' ? 'word' : 'nonword' };
    }
    if (c >= '1' && c <= '9') throw new RegexRejected(`backreferences ("\\${c}") are not supported`);
    if (c === 'k') throw new RegexRejected('named backreferences ("\\k<name>") are not supported');
    if (c === '0') {
      if (/[0-9]/.test(src[at + 2] ?? '')) throw new RegexRejected('octal escapes are not supported');
      return take(2);
    }
    if (SIMPLE_ESCAPES.includes(c)) return take(2);
    if (c === 'c') {
      if (/[a-zA-Z]/.test(src[at + 2] ?? '')) return take(3);
      throw new RegexRejected(`unsupported escape "\\c" at ${at}`);
    }
    if (c === 'x' && isHex(src.slice(at + 2, at + 4)) && src.slice(at + 2, at + 4).length === 2) return take(4);
    if (c === 'u') {
      if (this.unicode && src[at + 2] === '{') return take(src.indexOf('}', at) - at + 1);
      const hex = src.slice(at + 2, at + 6);
      if (hex.length === 4 && isHex(hex)) {
        const unit = parseInt(hex, 16);
        // With the u flag a surrogate pair written as two escapes is one character.
        const next = src.slice(at + 6, at + 12);
        if (this.unicode && unit >= 0xd800 && unit <= 0xdbff && /^\\u[dD][c-fC-F][0-9a-fA-F]{2}$/.test(next)) return take(12);
        return take(6);
      }
    }
    if ((c === 'p' || c === 'P') && this.unicode) return take(src.indexOf('}', at) - at + 1);
    // An identity escape (\. \* \/ ...), or a letter escape the native engine reads as the letter.
    if (c === undefined) throw new RegexRejected('pattern ends with "\\"');
    const cp = this.unicode ? String.fromCodePoint(src.codePointAt(at + 1) ?? 0) : c;
    return take(1 + cp.length);
  }
}

function isVariable(n: Extract<Node, { type: 'repeat' }>): boolean {
  return n.min !== n.max;
}

/** Rejects a variable quantifier inside a group repeated more than once: the exponential shapes. */
function checkNesting(node: Node, src: string, outer: Extract<Node, { type: 'repeat' }> | null): void {
  switch (node.type) {
    case 'repeat':
      if (outer && isVariable(node)) {
        throw new RegexRejected(
          `nested quantifier: "${src.slice(outer.from, outer.to)}" repeats "${src.slice(node.from, node.to)}", which backtracks ` +
            'catastrophically (exponential time) in backtracking regex engines; rewrite it without the inner quantifier ' +
            'or use a length/count rule',
        );
      }
      checkNesting(node.body, src, node.max > 1 ? node : outer);
      return;
    case 'seq':
      node.items.forEach((n) => checkNesting(n, src, outer));
      return;
    case 'alt':
      node.options.forEach((n) => checkNesting(n, src, outer));
      return;
    default:
      return;
  }
}

// ---- compilation to a Pike VM program ----

const OP_CHAR = 0;
const OP_SPLIT = 1; // try a first, then b
const OP_JMP = 2;
const OP_ASSERT = 3;
const OP_MATCH = 4;
// JavaScript's "empty check": an optional iteration of a quantifier (one beyond its minimum) that
// matched the empty string fails. Only bodies that can match empty need it; each such optional
// iteration is a region between ITER_START and ITER_END, nested to depth j. A thread carries k,
// how many of its enclosing regions (outermost first) have consumed a character since their
// iteration began (if an inner one has, so have the outer ones, so one number says it all).
const OP_ITER_START = 5; // a = j: the new iteration has consumed nothing, k = min(k, j - 1)
const OP_ITER_END = 6; // a = j: the iteration must have consumed (k >= j)
const ASSERTIONS: readonly Assertion[] = ['start', 'end', 'word', 'nonword'];

/** Instruction count of a node, stopping early once it exceeds the limit. */
function sizeOf(node: Node): number {
  switch (node.type) {
    case 'char':
    case 'assert':
      return 1;
    case 'seq':
      return node.items.reduce((s, n) => Math.min(s + sizeOf(n), MAX_PROGRAM_SIZE + 1), 0);
    case 'alt':
      return node.options.reduce((s, n) => Math.min(s + sizeOf(n) + 2, MAX_PROGRAM_SIZE + 1), -2);
    case 'repeat': {
      const body = sizeOf(node.body);
      const marks = nullable(node.body) ? 2 : 0; // ITER_START / ITER_END, see compileNode
      const optional = node.max === Infinity ? body + 2 + marks : (node.max - node.min) * (body + 1 + marks);
      return Math.min(node.min * body + optional, MAX_PROGRAM_SIZE + 1);
    }
  }
}

/** Whether the node can match the empty string. */
function nullable(node: Node): boolean {
  switch (node.type) {
    case 'char':
      return false;
    case 'assert':
      return true;
    case 'seq':
      return node.items.every(nullable);
    case 'alt':
      return node.options.some(nullable);
    case 'repeat':
      return node.min === 0 || nullable(node.body);
  }
}

interface Program {
  op: number[];
  a: number[];
  b: number[];
}

function emit(p: Program, op: number, a = 0, b = 0): number {
  p.op.push(op);
  p.a.push(a);
  p.b.push(b);
  return p.op.length - 1;
}

interface Emitter {
  p: Program;
  charIndex: (source: string) => number;
  /** Deepest empty-check region so far. */
  maxDepth: number;
}

/** Emits `node`; `depth` is the number of empty-check regions around it. */
function compileNode(node: Node, e: Emitter, depth: number): void {
  const p = e.p;
  switch (node.type) {
    case 'char':
      emit(p, OP_CHAR, e.charIndex(node.source), depth);
      return;
    case 'assert':
      emit(p, OP_ASSERT, ASSERTIONS.indexOf(node.kind));
      return;
    case 'seq':
      node.items.forEach((n) => compileNode(n, e, depth));
      return;
    case 'alt': {
      const jumps: number[] = [];
      node.options.forEach((option, i) => {
        if (i === node.options.length - 1) {
          compileNode(option, e, depth);
          return;
        }
        const split = emit(p, OP_SPLIT, p.op.length + 1);
        compileNode(option, e, depth);
        jumps.push(emit(p, OP_JMP));
        p.b[split] = p.op.length;
      });
      jumps.forEach((j) => (p.a[j] = p.op.length));
      return;
    }
    case 'repeat': {
      for (let i = 0; i < node.min; i++) compileNode(node.body, e, depth);
      // A split prefers its a-branch: the body when greedy, skipping it when lazy.
      const setSplit = (split: number, body: number, exit: number) => {
        p.a[split] = node.greedy ? body : exit;
        p.b[split] = node.greedy ? exit : body;
      };
      const check = nullable(node.body);
      const inner = check ? depth + 1 : depth;
      e.maxDepth = Math.max(e.maxDepth, inner);
      const optionalBody = () => {
        if (check) emit(p, OP_ITER_START, inner);
        compileNode(node.body, e, inner);
        if (check) emit(p, OP_ITER_END, inner);
      };
      if (node.max === Infinity) {
        const split = emit(p, OP_SPLIT);
        optionalBody();
        emit(p, OP_JMP, split);
        setSplit(split, split + 1, p.op.length);
        return;
      }
      const splits: number[] = [];
      for (let i = node.min; i < node.max; i++) {
        splits.push(emit(p, OP_SPLIT));
        optionalBody();
      }
      splits.forEach((s) => setSplit(s, s + 1, p.op.length));
      return;
    }
  }
}

/** Tests one character against one atom (literal, class, escape), with native semantics. */
class CharTest {
  private readonly re: RegExp;
  private readonly memo = new Map<string, boolean>();

  constructor(source: string, flags: string) {
    this.re = new RegExp(`^(?:${source})$`, flags);
  }

  test(ch: string): boolean {
    let hit = this.memo.get(ch);
    if (hit === undefined) {
      hit = this.re.test(ch);
      if (this.memo.size < 4096) this.memo.set(ch, hit);
    }
    return hit;
  }
}

export interface SafeRegex {
  readonly pattern: string;
  readonly flags: string;
  readonly unicode: boolean;
  readonly multiline: boolean;
  readonly op: Int32Array;
  readonly a: Int32Array;
  readonly b: Int32Array;
  readonly tests: readonly CharTest[];
  readonly word: CharTest;
  /** Deepest empty-check region: a thread's k ranges over 0..maxDepth. */
  readonly maxDepth: number;
}

/** Parses, checks and compiles a pattern; throws RegexRejected saying what is wrong. */
export function compileSafeRegex(pattern: string, flags = ''): SafeRegex {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new RegexRejected(`pattern is ${pattern.length} characters long (limit ${MAX_PATTERN_LENGTH})`);
  }
  for (const [i, f] of [...flags].entries()) {
    if (!ALLOWED_FLAGS.includes(f)) throw new RegexRejected(`flag "${f}" is not allowed (allowed: i, m, s, u)`);
    if (flags.indexOf(f) !== i) throw new RegexRejected(`flag "${f}" is repeated`);
  }
  try {
    new RegExp(pattern, flags); // syntax check only; never run on input
  } catch (e) {
    // V8 says "Invalid regular expression: /a(b/: Unterminated group": keep the last part.
    const message = (e as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
    throw new RegexRejected(`invalid regular expression: ${message}`);
  }
  const unicode = flags.includes('u');
  const ast = new Parser(pattern, unicode).parse();
  checkNesting(ast, pattern, null);
  const size = sizeOf(ast) + 1;
  if (size > MAX_PROGRAM_SIZE) {
    throw new RegexRejected(`pattern is too large once counted repetitions are expanded (limit ${MAX_PROGRAM_SIZE} steps)`);
  }

  const charFlags = [...flags].filter((f) => f !== 'm').join('');
  const sources: string[] = [];
  const charIndex = (source: string) => {
    const i = sources.indexOf(source);
    return i >= 0 ? i : sources.push(source) - 1;
  };
  const program: Program = { op: [], a: [], b: [] };
  const emitter: Emitter = { p: program, charIndex, maxDepth: 0 };
  compileNode(ast, emitter, 0);
  emit(program, OP_MATCH);
  return {
    pattern,
    flags,
    unicode,
    multiline: flags.includes('m'),
    op: Int32Array.from(program.op),
    a: Int32Array.from(program.a),
    b: Int32Array.from(program.b),
    tests: sources.map((s) => new CharTest(s, charFlags)),
    word: new CharTest('\\w', [...flags].filter((f) => f === 'i' || f === 'u').join('')),
    maxDepth: emitter.maxDepth,
  };
}

/** Threads (program counter, match start, k) with a visited set of (pc, k) for one position. */
class ThreadList {
  readonly pc: Int32Array;
  readonly start: Int32Array;
  readonly k: Int32Array;
  n = 0;
  private readonly mark: Int32Array;
  private gen = 1;

  constructor(
    size: number,
    private readonly levels: number,
  ) {
    this.pc = new Int32Array(size * levels);
    this.start = new Int32Array(size * levels);
    this.k = new Int32Array(size * levels);
    this.mark = new Int32Array(size * levels);
  }

  reset(): void {
    this.n = 0;
    this.gen++;
  }

  visit(pc: number, k: number): boolean {
    const key = pc * this.levels + k;
    if (this.mark[key] === this.gen) return false;
    this.mark[key] = this.gen;
    return true;
  }

  push(pc: number, start: number, k: number): void {
    this.pc[this.n] = pc;
    this.start[this.n] = start;
    this.k[this.n] = k;
    this.n++;
  }
}

const LINE_TERMINATORS = '\n\r\u2028\u2029';

export interface RegexMatch {
  /** UTF-16 offsets into the input, like RegExp's `index` and `index + match.length`. */
  index: number;
  end: number;
}

/** The leftmost-first match, as JavaScript's RegExp would find it, in linear time. */
export function safeRegexSearch(re: SafeRegex, input: string): RegexMatch | null {
  const chars = re.unicode ? Array.from(input) : input.split('');
  const n = chars.length;
  const offsets = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i] + chars[i].length;

  const isWord = (i: number) => i >= 0 && i < n && re.word.test(chars[i]);
  const holds = (kind: number, pos: number): boolean => {
    switch (ASSERTIONS[kind]) {
      case 'start':
        return pos === 0 || (re.multiline && LINE_TERMINATORS.includes(chars[pos - 1]));
      case 'end':
        return pos === n || (re.multiline && LINE_TERMINATORS.includes(chars[pos]));
      case 'word':
        return isWord(pos - 1) !== isWord(pos);
      default:
        return isWord(pos - 1) === isWord(pos);
    }
  };

  const size = re.op.length;
  const levels = re.maxDepth + 1;
  const stack = new Int32Array((size * 2 + 2) * levels * 2);
  // Follows jumps, splits, assertions and empty checks at `pos` in priority order (depth first,
  // a before b), adding the character and match instructions reached; the visited set of
  // (pc, k) keeps this linear.
  const add = (list: ThreadList, pc0: number, start: number, k0: number, pos: number) => {
    let sp = 0;
    stack[sp++] = pc0;
    stack[sp++] = k0;
    while (sp > 0) {
      const k = stack[--sp];
      const pc = stack[--sp];
      if (!list.visit(pc, k)) continue;
      const op = re.op[pc];
      const push = (to: number, kTo: number) => {
        stack[sp++] = to;
        stack[sp++] = kTo;
      };
      if (op === OP_JMP) push(re.a[pc], k);
      else if (op === OP_SPLIT) {
        push(re.b[pc], k);
        push(re.a[pc], k);
      } else if (op === OP_ASSERT) {
        if (holds(re.a[pc], pos)) push(pc + 1, k);
      } else if (op === OP_ITER_START) {
        push(pc + 1, Math.min(k, re.a[pc] - 1));
      } else if (op === OP_ITER_END) {
        // Leaving the region: its level no longer matters, so fold it away (fewer states).
        if (k >= re.a[pc]) push(pc + 1, re.a[pc] - 1);
      } else list.push(pc, start, k);
    }
  };

  // Each character test runs at most once per position, however many threads ask.
  const testedAt = new Int32Array(re.tests.length).fill(-1);
  const verdict = new Uint8Array(re.tests.length);
  const test = (i: number, pos: number): boolean => {
    if (testedAt[i] !== pos) {
      testedAt[i] = pos;
      verdict[i] = re.tests[i].test(chars[pos]) ? 1 : 0;
    }
    return verdict[i] === 1;
  };

  let cur = new ThreadList(size, levels);
  let next = new ThreadList(size, levels);
  let matchStart = -1;
  let matchEnd = -1;
  for (let pos = 0; pos <= n; pos++) {
    // A new attempt starting here has the lowest priority: later starts lose to earlier ones.
    if (matchStart < 0) add(cur, 0, pos, 0, pos);
    else if (cur.n === 0) break;
    next.reset();
    for (let t = 0; t < cur.n; t++) {
      const pc = cur.pc[t];
      if (re.op[pc] === OP_MATCH) {
        matchStart = cur.start[t];
        matchEnd = pos;
        break; // lower-priority threads can no longer win
      }
      // Consuming a character: every enclosing region (re.b[pc] of them) has now consumed.
      if (pos < n && test(re.a[pc], pos)) add(next, pc + 1, cur.start[t], re.b[pc], pos + 1);
    }
    [cur, next] = [next, cur];
  }
  return matchStart < 0 ? null : { index: offsets[matchStart], end: offsets[matchEnd] };
}
