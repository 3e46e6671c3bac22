// Copies non-TypeScript assets (SQL migrations, page templates, parser corpora) from src/ to dist/ after tsc.
import { cpSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, extname, join, relative } from 'node:path';

// .tsv: the parser corpora, which a taught form is checked against before it goes live.
const ASSET_EXTENSIONS = new Set(['.sql', '.html', '.css', '.svg', '.txt', '.json', '.tsv']);
// Browser files are served as they are (plain JavaScript included), so their folders go whole.
const WHOLE_DIRS = [join('src', 'pages', 'assets')];

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (ASSET_EXTENSIONS.has(extname(name)) || WHOLE_DIRS.some((whole) => path.startsWith(`${whole}/`))) {
      const target = join('dist', relative('src', path));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target);
    }
  }
}
walk('src');
