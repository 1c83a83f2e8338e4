// Builds the service worker (src/offline/sw.ts → sw.js next to index.html) and writes into it the
// list of this deploy's files, so the page keeps working offline after a first visit. Build only:
// the dev server never registers it (src/offline/register.ts).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { Plugin, ResolvedConfig } from 'vite';
import type { OfflineManifest } from '../../src/offline/policy';

export const SW_FILE = 'sw.js';
const PLACEHOLDER = '__RP_OFFLINE_MANIFEST__';
/** The embedded model (public/models/): cached when first fetched, not at install. */
const ON_FIRST_USE = ['models/'];

export interface BuiltFile {
  /** Path relative to the output folder, with "/". */
  name: string;
  content: string | Uint8Array;
}

/** Kept out of the install-time cache: source maps, and WebAssembly, which only the zero-shot judge loads (about 27 MB; that judge needs the network for its model anyway). */
function inShell(name: string): boolean {
  if (name === SW_FILE || name.endsWith('.map') || name.endsWith('.wasm')) return false;
  return !ON_FIRST_USE.some((prefix) => name.startsWith(prefix));
}

/** The manifest of a deploy: its version hashes every file's name and content, so any change makes a new cache. */
export function offlineManifest(files: readonly BuiltFile[]): OfflineManifest {
  const sorted = [...files].filter((f) => f.name !== SW_FILE).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const hash = createHash('sha256');
  for (const f of sorted) hash.update(`${f.name}\0${createHash('sha256').update(f.content).digest('hex')}\n`);
  return { version: hash.digest('hex').slice(0, 16), shell: sorted.map((f) => f.name).filter(inShell), onFirstUse: ON_FIRST_USE };
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

export function offlinePlugin(): Plugin {
  let config: ResolvedConfig;
  return {
    name: 'rubric-playground:offline',
    apply: 'build',
    configResolved(resolved) {
      config = resolved;
    },
    buildStart() {
      this.emitFile({ type: 'chunk', id: resolve(config.root, 'src/offline/sw.ts'), fileName: SW_FILE });
    },
    // After Vite's HTML plugin has added index.html to the bundle.
    generateBundle: {
      order: 'post',
      handler(_options, bundle) {
        const sw = bundle[SW_FILE];
        if (!sw || sw.type !== 'chunk') return this.error(`${SW_FILE} was not built`);
        if (sw.imports.length > 0) return this.error(`${SW_FILE} must be one self-contained script, but it imports ${sw.imports.join(', ')}`);
        if (!sw.code.includes(PLACEHOLDER)) return this.error(`${SW_FILE} has no ${PLACEHOLDER} to replace`);
        const files: BuiltFile[] = Object.values(bundle).map((f) => ({ name: f.fileName, content: f.type === 'chunk' ? f.code : f.source }));
        const publicDir = config.publicDir;
        if (publicDir && config.build.copyPublicDir) {
          for (const path of listFiles(publicDir)) files.push({ name: relative(publicDir, path).split(sep).join('/'), content: readFileSync(path) });
        }
        sw.code = sw.code.replaceAll(PLACEHOLDER, JSON.stringify(offlineManifest(files)));
      },
    },
  };
}
