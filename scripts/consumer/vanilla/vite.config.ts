import { defineConfig } from 'vite';

// The page's own build: React stays in (it is an app); the harness measures client+react apart.
export default defineConfig({ build: { outDir: 'dist', emptyOutDir: true } });
