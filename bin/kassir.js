#!/usr/bin/env node
// The `kassir` operator CLI; built from src/cli.ts by `npm run build` (run automatically by `npm install`).
import('../dist/cli.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND') {
    console.error('kassir: the CLI is not built yet. Run `npm run build` in the project folder first.');
    process.exit(1);
  }
  throw err;
});
