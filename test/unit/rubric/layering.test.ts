// src/rubric is pure TypeScript: it runs in Node, the page and workers, so it imports only
// its own modules, zod and re2js — nothing from src/gpu, src/ops or browser-only APIs.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const dir = join(__dirname, '../../../src/rubric');
// Every .ts file, subfolders (e.g. judges/) included.
const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));

describe('src/rubric layering', () => {
  it.each(files)('%s imports only ./ modules, zod and re2js, and uses no browser globals', (file) => {
    const source = readFileSync(join(dir, file), 'utf8');
    const specifiers = [...source.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'/gm)].map((m) => m[1]);
    // Relative imports must stay inside src/rubric: no more "../" than the file is deep.
    const depth = file.split('/').length - 1;
    const inside = (s: string) => /^\.{1,2}\//.test(s) && (s.match(/\.\.\//g) ?? []).length <= depth;
    for (const s of specifiers) expect(s === 'zod' || s === 're2js' || inside(s), `${file} imports ${s}`).toBe(true);
    // A browser global is used as `window.x`, `window[...]` or `typeof window`; the bare word may be
    // prose ("the evolution window's rollouts").
    const globals = 'document|window|navigator|localStorage';
    const used = new RegExp(`\\b(?:${globals})(?:\\.[A-Za-z_$]|\\s*\\[)|\\btypeof\\s+(?:${globals})\\b|\\b(?:GPUDevice|GPUBuffer)\\b`);
    expect(source).not.toMatch(used);
  });

  it('found the files', () => {
    expect(files.length).toBeGreaterThan(10);
  });
});
