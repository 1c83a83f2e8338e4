// A text include for WGSL (which has none): a shader line `// INCLUDE name.wgsl` is replaced by
// that file's text, so kernels that must compute the same bits (the AdamW variants) share one
// copy of their arithmetic instead of three that could drift apart.

const INCLUDE = /^[ \t]*\/\/ INCLUDE ([\w.-]+)[ \t]*$/gm;

/**
 * `code` with every `// INCLUDE name` line replaced by `files[name]` (not expanded again: an
 * included file holds functions, not includes). Throws on a name `files` lacks, and when
 * `files` names a file the code never includes (a mistyped marker would otherwise compile to a
 * shader missing its function only on the GPU).
 */
export function includeWgsl(code: string, files: Readonly<Record<string, string>>): string {
  const used = new Set<string>();
  const out = code.replace(INCLUDE, (_line, name: string) => {
    const text = files[name];
    if (text === undefined) throw new Error(`WGSL include: no file ${name} given`);
    used.add(name);
    return text.replace(/\n$/, '');
  });
  const unused = Object.keys(files).filter((n) => !used.has(n));
  if (unused.length > 0) throw new Error(`WGSL include: the shader never includes ${unused.join(', ')}`);
  return out;
}
