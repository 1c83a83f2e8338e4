// The WGSL of two kernels as one (src/gpu/dispatchPair.ts decides when): workgroups [0, nA) run
// the first kernel's entry point and [nA, nA + nB) the second's.
//
// The pair's WGSL is built from the two kernels' own text: comments and other entry points
// stripped, the second kernel's module-scope names prefixed (`p2_`) and its bindings numbered
// after the first's (a read-only range both bind, declared alike, bound once), each
// entry point turned into a plain function taking its builtins as arguments, and a router entry
// point that rebuilds each kernel's workgroup_id, num_workgroups and global_invocation_id from
// its share of the workgroups (the grids come in a uniform, so one pipeline serves every shape).
// Every invocation runs the same code as in its own dispatch: the results are bit-identical.
// A kernel is pairable when its workgroup size and workgroup memory can be read from its text;
// the two must have equal workgroup sizes and fit the device's binding and memory limits.
import type { BindingKind, KernelSpec } from './pipelineCache';

type Builtin = 'workgroup_id' | 'num_workgroups' | 'local_invocation_id' | 'local_invocation_index' | 'global_invocation_id';
const BUILTINS: readonly string[] = ['workgroup_id', 'num_workgroups', 'local_invocation_id', 'local_invocation_index', 'global_invocation_id'];

/** What pairing needs to know of one kernel, read from its WGSL. */
export interface PairableKernel {
  /** The module without comments and directives, its entry point a plain function. */
  body: string;
  /** `enable ...;` and similar module directives, each once. */
  directives: string[];
  /** The entry function's builtin parameters, in order. */
  params: Builtin[];
  workgroupSize: [number, number, number];
  /** Bytes of the var<workgroup> the entry point uses (directly or through the functions it calls). */
  workgroupBytes: number;
  /** The resource variable the entry point uses at each binding: name, and address space + type. */
  resources: Map<number, { name: string; declared: string }>;
}

/** A composed pair: its kernel, and which of the second kernel's bindings it keeps (the rest are the first's). */
export interface PairKernel {
  spec: KernelSpec;
  keptB: number[];
}

/** The device limits a pair must fit. */
export interface PairLimits {
  maxStorageBuffersPerShaderStage: number;
  maxUniformBuffersPerShaderStage: number;
  maxComputeWorkgroupStorageSize: number;
}

/** Names the composition gives its own variables and functions; a kernel using one is not paired. */
const RESERVED = /^(pair_|PairGrid$)/;

/** Reads `spec`'s entry point for pairing, or null when its text does not say enough. */
export function pairableKernel(spec: KernelSpec): PairableKernel | null {
  const directives: string[] = [];
  let code = stripComments(spec.code).replace(/^\s*(enable|requires|diagnostic)\b[^;]*;/gm, (d) => {
    directives.push(d.trim());
    return '';
  });
  // The module's other entry points go: nothing can call them, and their resources, renumbered
  // with the rest, could clash within them.
  code = withoutOtherEntryPoints(code, spec.entryPoint);
  const entry = findEntry(code, spec.entryPoint);
  if (!entry) return null;
  const values = moduleValues(code, spec.constants ?? {});
  const size = splitTopLevel(entry.workgroupSize).map((e) => evaluate(e, values));
  if (size.length < 1 || size.length > 3 || size.some((n) => n === null || n < 1)) return null;
  const workgroupSize = [size[0]!, size[1] ?? 1, size[2] ?? 1] as [number, number, number];
  const used = usedNames(code, spec.entryPoint);
  const workgroupBytes = workgroupMemory(code, values, used);
  const resources = new Map<number, { name: string; declared: string }>();
  for (const m of moduleScope(code).matchAll(/@binding\(\s*(\d+)\s*\)\s*var\s*(<[^>]*>)\s*(\w+)\s*:\s*([^;]+);/g)) {
    if (used.has(m[3]!)) resources.set(Number(m[1]), { name: m[3]!, declared: `${m[2]}:${m[4]}`.replace(/\s+/g, '') });
  }
  if (workgroupBytes === null) return null;
  const params: Builtin[] = [];
  for (const p of splitTopLevel(entry.params)) {
    const m = /^@builtin\(\s*(\w+)\s*\)\s*(\w+)\s*:/.exec(p.trim());
    if (!m || !BUILTINS.includes(m[1]!)) return null;
    params.push(m[1] as Builtin);
  }
  const plainParams = splitTopLevel(entry.params).map((p) => p.trim().replace(/^@builtin\(\s*\w+\s*\)\s*/, ''));
  code = `${code.slice(0, entry.start)}fn ${spec.entryPoint}(${plainParams.join(', ')})${code.slice(entry.end)}`;
  if (topLevelNames(code).some((n) => RESERVED.test(n))) return null;
  return { body: code, directives, params, workgroupSize, workgroupBytes, resources };
}

/**
 * The pair kernel of `a` then `b` (bindings: a's, then b's not shared, then the router's grid
 * uniform), or null when the two cannot share a dispatch: different workgroup sizes or over a
 * device limit. `shared[j]` names a binding of `a` that b's binding j may reuse (the same
 * read-only buffer range): it does when both declare it alike, which keeps a pair of kernels
 * reading the same inputs within the device's storage-binding limit.
 */
export function composePair(a: KernelSpec, pa: PairableKernel, b: KernelSpec, pb: PairableKernel, limits: PairLimits, shared: readonly (number | null)[] = []): PairKernel | null {
  if (pa.workgroupSize.some((n, i) => n !== pb.workgroupSize[i])) return null;
  let bodyA = pa.body;
  let bodyB = prefixNames(pb.body, 'p2_');
  const keptB: number[] = [];
  const numbers = new Map<number, number>();
  const renamedA = new Set<number>();
  b.bindings.forEach((_kind, j) => {
    const i = shared[j];
    const ra = i === null || i === undefined ? undefined : pa.resources.get(i);
    const rb = pb.resources.get(j);
    if (ra && rb && ra.declared === rb.declared && ra.declared.startsWith('<storage,read>')) {
      // One variable for both: renamed in each kernel to a name no local can hold (once in a,
      // whose binding several of b's may share).
      const name = `pair_shared${i}`;
      if (!renamedA.has(i!)) bodyA = renameNames(bodyA, new Map([[ra.name, name]]));
      renamedA.add(i!);
      bodyB = renameNames(bodyB.replace(new RegExp(`@group\\(0\\)\\s*@binding\\(\\s*${j}\\s*\\)\\s*var\\s*<[^>]*>\\s*p2_${rb.name}\\s*:[^;]*;`), ''), new Map([[`p2_${rb.name}`, name]]));
      numbers.set(j, a.bindings.length);
    } else {
      numbers.set(j, a.bindings.length + keptB.length);
      keptB.push(j);
    }
  });
  const bindings: BindingKind[] = [...a.bindings, ...keptB.map((j) => b.bindings[j]!), 'uniform'];
  const storage = bindings.filter((k) => k !== 'uniform').length;
  const uniforms = bindings.length - storage;
  if (storage > limits.maxStorageBuffersPerShaderStage || uniforms > limits.maxUniformBuffersPerShaderStage) return null;
  if (pa.workgroupBytes + pb.workgroupBytes > limits.maxComputeWorkgroupStorageSize) return null;
  // B's other declarations of a shared number are unused by the pair: any number serves them.
  const renamed = bodyB.replace(/@binding\(\s*(\d+)\s*\)/g, (_m, n: string) => `@binding(${numbers.get(Number(n)) ?? a.bindings.length + Number(n)})`);
  const [x, y, z] = pa.workgroupSize;
  const call = (fn: string, params: readonly Builtin[], grid: string) =>
    `${fn}(${params.map((p) => builtinArgument(p, grid, pa.workgroupSize)).join(', ')})`;
  const router = `
struct PairGrid { a: vec4<u32>, b: vec4<u32> }
@group(0) @binding(${bindings.length - 1}) var<uniform> pair_grid: PairGrid;

// Workgroup w of a grid g (x fastest), as the kernel's own dispatch would number it.
fn pair_at(w: u32, g: vec3<u32>) -> vec3<u32> {
  return vec3<u32>(w % g.x, (w / g.x) % g.y, w / (g.x * g.y));
}

@compute @workgroup_size(${x}, ${y}, ${z})
fn pair_main(@builtin(workgroup_id) pair_w: vec3<u32>, @builtin(num_workgroups) pair_n: vec3<u32>,
             @builtin(local_invocation_id) pair_lid: vec3<u32>, @builtin(local_invocation_index) pair_lix: u32) {
  // Workgroup-uniform: the branch below keeps each kernel's barriers in uniform control flow.
  let pair_k = pair_w.x + pair_w.y * pair_n.x;
  if (pair_k < pair_grid.a.w) {
    let pair_wid = pair_at(pair_k, pair_grid.a.xyz);
    ${call(a.entryPoint, pa.params, 'pair_grid.a.xyz')};
  } else if (pair_k < pair_grid.a.w + pair_grid.b.w) {
    let pair_wid = pair_at(pair_k - pair_grid.a.w, pair_grid.b.xyz);
    ${call(`p2_${b.entryPoint}`, pb.params, 'pair_grid.b.xyz')};
  }
}
`;
  const directives = [...new Set([...pa.directives, ...pb.directives])];
  const constants: Record<string, number> = { ...(a.constants ?? {}) };
  for (const [k, v] of Object.entries(b.constants ?? {})) constants[`p2_${k}`] = v;
  const spec: KernelSpec = {
    name: `pair(${a.name}:${a.entryPoint} + ${b.name}:${b.entryPoint})`,
    code: `${directives.join('\n')}\n${bodyA}\n${renamed}\n${router}`,
    entryPoint: 'pair_main',
    bindings,
    ...(Object.keys(constants).length > 0 ? { constants } : {}),
  };
  return { spec, keptB };
}

function builtinArgument(p: Builtin, grid: string, size: readonly number[]): string {
  switch (p) {
    case 'workgroup_id':
      return 'pair_wid';
    case 'num_workgroups':
      return grid;
    case 'local_invocation_id':
      return 'pair_lid';
    case 'local_invocation_index':
      return 'pair_lix';
    case 'global_invocation_id':
      return `pair_wid * vec3<u32>(${size.join(', ')}) + pair_lid`;
  }
}

export function stripComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/[^\n]*/g, '');
}

/** `code` without the @compute functions other than `entry` (header to closing brace). */
function withoutOtherEntryPoints(code: string, entry: string): string {
  const header = functionHeaders('\\w+');
  let out = '';
  let last = 0;
  for (let m = header.exec(code); m; m = header.exec(code)) {
    if (!/@compute\b/.test(m[1]!) || m[2] === entry) continue;
    const close = closing(code, code.indexOf('{', m.index + m[0].length));
    if (close < 0) break;
    const end = close + 1;
    out += code.slice(last, m.index);
    last = end;
    header.lastIndex = end;
  }
  return out + code.slice(last);
}

/** Functions with attributes named `name` (a regex source): groups 1 the attributes, 2 the name; up to the `(`. */
function functionHeaders(name: string): RegExp {
  return new RegExp(`((?:@\\w+(?:\\s*\\([^()]*(?:\\([^()]*\\)[^()]*)*\\))?\\s*)+)fn\\s+(${name})\\s*\\(`, 'g');
}

/** The entry point's attributes + header span, its workgroup_size text and parameter list. */
function findEntry(code: string, entry: string): { start: number; end: number; workgroupSize: string; params: string } | null {
  const header = functionHeaders(entry);
  for (let m = header.exec(code); m; m = header.exec(code)) {
    const attrs = m[1]!;
    if (!/@compute\b/.test(attrs)) continue;
    const size = /@workgroup_size\s*\(/.exec(attrs);
    if (!size) return null;
    const sizeText = balanced(attrs, size.index + size[0].length - 1);
    const open = m.index + m[0].length - 1;
    const params = balanced(code, open);
    if (sizeText === null || params === null) return null;
    return { start: m.index, end: open + params.length + 2, workgroupSize: sizeText, params };
  }
  return null;
}

/** The text between the bracket at `open` and its match. */
function balanced(text: string, open: number): string | null {
  const close = closing(text, open);
  return close < 0 ? null : text.slice(open + 1, close);
}

/** Index of the bracket matching the `(` or `{` at `open`, or -1. */
function closing(text: string, open: number): number {
  const [o, c] = text[open] === '{' ? ['{', '}'] : ['(', ')'];
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === o) depth++;
    else if (text[i] === c && --depth === 0) return i;
  }
  return -1;
}

/** Splits at commas outside brackets (of any kind, and WGSL's template angle brackets). */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[' || c === '<') depth++;
    else if (c === ')' || c === ']' || c === '>') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  const last = text.slice(from);
  if (last.trim() !== '') parts.push(last);
  return parts;
}

/** Module-scope const and override initialisers (overrides replaced by the pipeline's constants). */
function moduleValues(code: string, constants: Readonly<Record<string, number>>): Map<string, string> {
  const values = new Map<string, string>();
  for (const m of moduleScope(code).matchAll(/\b(const|override)\s+(\w+)\s*(?::\s*[\w<>]+\s*)?=\s*([^;]+);/g)) {
    const [, kind, name, init] = m;
    values.set(name!, kind === 'override' && name! in constants ? String(constants[name!]) : init!.trim());
  }
  for (const [k, v] of Object.entries(constants)) if (!values.has(k)) values.set(k, String(v));
  return values;
}

/** `code` with everything inside braces blanked: what is declared at module scope. */
function moduleScope(code: string): string {
  let depth = 0;
  let out = '';
  for (const c of code) {
    if (c === '{') depth++;
    out += depth > 0 ? ' ' : c;
    if (c === '}') depth--;
  }
  return out;
}

/** Evaluates an integer expression of literals, names in `values`, + - * / % and brackets; null if it cannot. */
export function evaluate(expr: string, values: ReadonlyMap<string, string>, depth = 0): number | null {
  if (depth > 16) return null;
  const tokens = expr.match(/\d+[uiU]?|\w+|[-+*/%()]|\S/g) ?? [];
  let i = 0;
  const atom = (): number | null => {
    const t = tokens[i++];
    if (t === undefined) return null;
    if (t === '(') {
      const v = sum();
      return tokens[i++] === ')' ? v : null;
    }
    if (t === '-') {
      const v = atom();
      return v === null ? null : -v;
    }
    if (/^\d+[uiU]?$/.test(t)) return parseInt(t, 10);
    if (/^(true|false)$/.test(t)) return t === 'true' ? 1 : 0;
    const init = values.get(t);
    return init === undefined ? null : evaluate(init, values, depth + 1);
  };
  const product = (): number | null => {
    let v = atom();
    while (v !== null && (tokens[i] === '*' || tokens[i] === '/' || tokens[i] === '%')) {
      const op = tokens[i++];
      const r = atom();
      if (r === null || (op !== '*' && r === 0)) return null;
      v = op === '*' ? v * r : op === '/' ? Math.trunc(v / r) : v % r;
    }
    return v;
  };
  const sum = (): number | null => {
    let v = product();
    while (v !== null && (tokens[i] === '+' || tokens[i] === '-')) {
      const op = tokens[i++];
      const r = product();
      if (r === null) return null;
      v = op === '+' ? v + r : v - r;
    }
    return v;
  };
  const v = sum();
  return i === tokens.length ? v : null;
}

const SCALAR_BYTES: Record<string, number> = { f32: 4, u32: 4, i32: 4, f16: 2, 'atomic<u32>': 4, 'atomic<i32>': 4 };

/** Bytes of the var<workgroup> among `used`, or null for a type this cannot size. */
function workgroupMemory(code: string, values: ReadonlyMap<string, string>, used: ReadonlySet<string>): number | null {
  let bytes = 0;
  for (const m of moduleScope(code).matchAll(/var\s*<\s*workgroup\s*>\s*(\w+)\s*:\s*([^;]+);/g)) {
    if (!used.has(m[1]!)) continue;
    const size = typeBytes(m[2]!.replace(/\s+/g, ''), values);
    if (size === null) return null;
    bytes += size;
  }
  return bytes;
}

function typeBytes(type: string, values: ReadonlyMap<string, string>): number | null {
  if (type in SCALAR_BYTES) return SCALAR_BYTES[type]!;
  const vec = /^vec([234])<(f32|u32|i32|f16)>$/.exec(type);
  if (vec) return (vec[1] === '2' ? 2 : 4) * SCALAR_BYTES[vec[2]!]!;
  const array = /^array<(.+),([^,<>]+)>$/.exec(type);
  if (!array) return null;
  const element = typeBytes(array[1]!, values);
  const count = evaluate(array[2]!, values);
  return element === null || count === null ? null : element * count;
}

/**
 * Every name the entry function uses, directly or through the module's functions it calls (what
 * WebGPU calls the entry point's static use): its workgroup memory is only that of these.
 */
function usedNames(code: string, entry: string): Set<string> {
  const bodies = new Map<string, string>();
  for (const m of code.matchAll(/\bfn\s+(\w+)\s*\(/g)) {
    const close = closing(code, code.indexOf('{', m.index));
    if (close >= 0) bodies.set(m[1]!, code.slice(m.index, close + 1));
  }
  const used = new Set<string>([entry]);
  const queue = [entry];
  while (queue.length > 0) {
    const body = bodies.get(queue.pop()!) ?? '';
    for (const [name] of body.matchAll(/[A-Za-z_]\w*/g)) {
      if (used.has(name)) continue;
      used.add(name);
      if (bodies.has(name)) queue.push(name);
    }
  }
  return used;
}

/** Names declared at module scope: functions, structs, consts, overrides, aliases, variables. */
export function topLevelNames(code: string): string[] {
  const names: string[] = [];
  let depth = 0;
  const re = /[{}]|\b(fn|struct|const|override|alias)\s+(\w+)|\bvar\s*(?:<[^>]*>)?\s*(\w+)/g;
  for (let m = re.exec(code); m; m = re.exec(code)) {
    if (m[0] === '{') depth++;
    else if (m[0] === '}') depth--;
    else if (depth === 0) names.push((m[2] ?? m[3])!);
  }
  return names;
}

/**
 * `code` with every module-scope name prefixed, wherever it is used (a local that shadows one is
 * renamed with its uses, which changes nothing); member names after `.` and in struct bodies stay.
 */
export function prefixNames(code: string, prefix: string): string {
  return renameNames(code, new Map(topLevelNames(code).map((n) => [n, prefix + n])));
}

/** `code` with the identifiers in `names` renamed, as prefixNames does. */
export function renameNames(code: string, names: ReadonlyMap<string, string>): string {
  let out = '';
  let inStruct = false;
  let structDepth = 0;
  let depth = 0;
  const re = /[{}]|\bstruct\s+\w+|[A-Za-z_]\w*/g;
  let last = 0;
  for (let m = re.exec(code); m; m = re.exec(code)) {
    out += code.slice(last, m.index);
    last = m.index + m[0].length;
    const t = m[0];
    if (t === '{') {
      depth++;
      out += t;
      continue;
    }
    if (t === '}') {
      depth--;
      if (inStruct && depth === structDepth) inStruct = false;
      out += t;
      continue;
    }
    if (/^struct\s/.test(t)) {
      const name = t.replace(/^struct\s+/, '');
      inStruct = true;
      structDepth = depth;
      out += `struct ${names.get(name) ?? name}`;
      continue;
    }
    const member = neighbour(code, m.index, -1) === '.' || (inStruct && depth === structDepth + 1 && neighbour(code, last, 1) === ':');
    out += member ? t : (names.get(t) ?? t);
  }
  return out + code.slice(last);
}

/** The first non-space character from `at` going in `step`'s direction (before `at` when -1). */
function neighbour(code: string, at: number, step: 1 | -1): string {
  for (let i = step === 1 ? at : at - 1; i >= 0 && i < code.length; i += step) {
    if (!/\s/.test(code[i]!)) return code[i]!;
  }
  return '';
}
