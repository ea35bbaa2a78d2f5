import { defaultClientConditions, defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Built by serveDashboard (src/server) in the repository, or by `pnpm build` for the image, and
// served with /config.json beside it; nothing here is configuration: the URLs of auth and relay
// come from /config.json at run time.
export default defineConfig({
  root: import.meta.dirname,
  // Relative asset URLs: the page works wherever it is mounted.
  base: './',
  plugins: [react()],
  // Inside the monorepo the streamgate packages are used from their TypeScript source.
  resolve: { conditions: ['streamgate-source', ...defaultClientConditions] },
  // dist/page, beside the server's own dist/*.js (tsc): the image ships both under dist/.
  build: { outDir: 'dist/page', target: 'es2022', sourcemap: true, chunkSizeWarningLimit: 1_000 },
});
