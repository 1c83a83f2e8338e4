// Loop unrolling for WGSL text. SwiftShader (the software adapter) does not unroll a loop whose
// bound is a pipeline constant, so a private array indexed by the loop counter lives in memory
// and every access is a load or store; the same statements with literal indices compile to
// registers (what made the register-blocked matmuls 1.2-1.8x faster, shaders/matmul_blocked.wgsl).
// Here the loop is written out in the text, for a bound known when the pipeline is made.

/**
 * `code` with every loop `for (var X = 0u; X < bound; X++) { body }` replaced by `count` copies
 * of its body, X replaced by 0u, 1u, ... (each copy in its own block, so its `let`s do not
 * clash). Throws when no such loop exists (a renamed bound would silently leave the shader
 * rolled), when count is not a positive integer, or when a body's braces do not close.
 */
export function unrollWgsl(code: string, bound: string, count: number): string {
  if (!Number.isInteger(count) || count < 1) throw new Error(`WGSL unroll: count must be a positive integer, got ${count}`);
  const header = new RegExp(`for \\(var (\\w+) = 0u; \\1 < ${bound}; \\1\\+\\+\\) \\{`, 'g');
  let out = '';
  let from = 0;
  let loops = 0;
  for (let m = header.exec(code); m !== null; m = header.exec(code)) {
    const open = m.index + m[0].length - 1;
    const close = matchingBrace(code, open);
    const body = code.slice(open + 1, close);
    const counter = new RegExp(`\\b${m[1]}\\b`, 'g');
    const copies = Array.from({ length: count }, (_, i) => `{${body.replace(counter, `${i}u`)}}`);
    out += code.slice(from, m.index) + copies.join(' ');
    from = close + 1;
    header.lastIndex = from;
    loops++;
  }
  if (loops === 0) throw new Error(`WGSL unroll: no loop bounded by ${bound}`);
  return out + code.slice(from);
}

/** Index of the `}` that closes the `{` at `open` (WGSL has no braces in strings; comments are skipped). */
function matchingBrace(code: string, open: number): number {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    if (code.startsWith('//', i)) {
      const end = code.indexOf('\n', i);
      if (end < 0) break;
      i = end;
      continue;
    }
    if (code[i] === '{') depth++;
    else if (code[i] === '}' && --depth === 0) return i;
  }
  throw new Error(`WGSL unroll: the loop body opened at offset ${open} never closes`);
}
