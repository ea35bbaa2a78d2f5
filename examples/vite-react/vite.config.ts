import { defaultClientConditions, defineConfig, loadEnv } from 'vite';
import react from '@vitejs/plugin-react';
import { z } from 'zod';

const serverEnv = z.object({
  VITE_AUTH_URL: z.url({
    protocol: /^https?$/,
    error: 'VITE_AUTH_URL must be the http(s) URL of the auth service, e.g. http://127.0.0.1:8080',
  }),
});

export default defineConfig(({ mode }) => {
  // Read from .env, .env.local, .env.[mode] and the process environment (which wins).
  const parsed = serverEnv.safeParse({ VITE_AUTH_URL: 'http://127.0.0.1:8080', ...loadEnv(mode, import.meta.dirname, 'VITE_') });
  if (!parsed.success) throw new Error(z.prettifyError(parsed.error));
  // The page asks its own origin for tokens and this server forwards /trpc to the auth service:
  // the page and its token endpoint share an origin, as with a product backend serving both,
  // so no CORS headers are needed from auth.
  const proxy = { '/trpc': { target: parsed.data.VITE_AUTH_URL, changeOrigin: true } };
  return {
    plugins: [react()],
    // Inside the monorepo the streamgate packages are used from their TypeScript source (nothing
    // to build first). An app that installs them from npm needs no such condition.
    resolve: { conditions: ['streamgate-source', ...defaultClientConditions] },
    server: { proxy },
    preview: { proxy },
  };
});
