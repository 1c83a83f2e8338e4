import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

export default defineConfig({
  plugins: [svelte()],
  // Shaders live in the top-level shaders/ folder and are imported with `?raw`.
  server: { fs: { allow: ['.'] } },
  worker: { format: 'es' },
  build: { target: 'es2022' },
});
