import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The console and cabinets: one single-page app, served by the Kassir process at /console
// (src/pages/console.routes.ts) from dist/console, its assets content-hashed for long caching.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 2000,
  },
  server: {
    // `npx vite web` during development: the API stays on the running service.
    proxy: { '/admin': 'http://127.0.0.1:8080', '/auth': 'http://127.0.0.1:8080' },
  },
});
