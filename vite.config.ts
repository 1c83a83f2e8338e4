import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { offlinePlugin } from './scripts/vite/offlinePlugin';

export default defineConfig({
  // Relative: the built dist/ works from any static host under any sub-path.
  base: './',
  plugins: [svelte(), offlinePlugin()],
  // Shaders live in the top-level shaders/ folder and are imported with `?raw`.
  server: { fs: { allow: ['.'] } },
  worker: { format: 'es' },
  // Scan every page and every module the test harness imports dynamically at startup, so
  // Vite pre-bundles all dependencies at once instead of discovering one mid-test and
  // reloading the page (which fails an in-flight dynamic import).
  optimizeDeps: {
    entries: ['index.html', 'test/harness/index.html', 'test/harness/cases/*.ts', 'bench/*.html', 'scripts/page/*.ts', 'src/worker/*.ts', 'src/ui/lib/*.worker.ts'],
  },
  // Every chunk, the workers' included, in assets/ right under the page: src/model/registry.ts
  // finds the page's folder from there.
  build: { target: 'es2022', assetsDir: 'assets' },
});
