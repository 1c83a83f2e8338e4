// src/store sits above rubric/rl/model and below the workers and UI: it may use idb and its own
// modules, import pure helpers from src/rubric and the pure judge-choice and judge-bias schemas from src/rl, and
// otherwise only types from src/rl and src/model —
// never src/gpu or src/ops (it must run in any worker or page without a GPU).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const dir = join(__dirname, '../../../src/store');
const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
const VALUE_IMPORTS = /^(?:idb|\.\/[\w.]+|\.\.\/rubric\/(?:version|aggregate)|\.\.\/rl\/(?:judgeChoice|judgeBias))$/;
const TYPE_ONLY = /^(?:\.\.\/rl\/(?:grpoStep|config)|\.\.\/rubric|\.\.\/model\/checkpoint)$/;

describe('src/store layering', () => {
  it.each(files)('%s imports only what the store layer may', (file) => {
    const source = readFileSync(join(dir, file), 'utf8');
    const imports = [...source.matchAll(/^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+'([^']+)'/gm)];
    for (const [, , typeOnly, spec] of imports) {
      if (typeOnly) expect(VALUE_IMPORTS.test(spec) || TYPE_ONLY.test(spec), `${file}: import type from ${spec}`).toBe(true);
      else expect(VALUE_IMPORTS.test(spec), `${file}: value import from ${spec}`).toBe(true);
    }
    expect(source).not.toMatch(/from\s+'\.\.\/(?:gpu|ops)\//);
  });

  it('found the files', () => {
    expect(files).toEqual(expect.arrayContaining(['runStore.ts', 'migrations.ts', 'locks.ts', 'schema.ts', 'index.ts']));
  });
});
