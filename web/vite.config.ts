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
    rolldownOptions: {
      output: {
        // The sign-in page loads the entry and `vendor` only (a budget in test/bundle.test.ts); each
        // screen is a chunk of its own, loaded when its route opens (main.tsx). The groups, first match
        // by priority: `vendor`, the libraries the first screen needs; `first`, the app's own modules
        // it needs, kept in the entry (without it `shared` would take them and, through them, `ui`,
        // into the first screen); `charts`, only with the Dashboard and Rates; `ui`, the libraries
        // later screens need; `shared`, the hooks and components they share — two chunks, not dozens.
        codeSplitting: {
          groups: [
            { name: 'vendor', test: /[\\/]node_modules[\\/]/, tags: ['$initial'], priority: 4 },
            { name: 'first', tags: ['$initial'], priority: 3 },
            { name: 'charts', test: /[\\/]node_modules[\\/](recharts|@mantine[\\/]charts)[\\/]/, priority: 2 },
            { name: 'ui', test: /[\\/]node_modules[\\/]/, priority: 1 },
            { name: 'shared', test: /[\\/]web[\\/]src[\\/](api|components)[\\/]/ },
          ],
        },
      },
    },
  },
  server: {
    // `npx vite web` during development: the API stays on the running service.
    proxy: { '/admin': 'http://127.0.0.1:8080', '/auth': 'http://127.0.0.1:8080' },
  },
});
