// The page: plain HTML, CSS and JavaScript modules in page/, read once and served as they are —
// no build step, no CDN, so it works offline and what is in the repository is what runs.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const DIR = path.join(import.meta.dirname, 'page');

export interface Asset {
  body: string;
  type: string;
}

/** Every file of page/, by its URL path ('/' for index.html). */
export function loadAssets(files = ['index.html', 'app.js', 'render.js', 'dialog.js', 'style.css']): Map<string, Asset> {
  return new Map(
    files.map((f) => [f === 'index.html' ? '/' : `/${f}`, { body: readFileSync(path.join(DIR, f), 'utf8'), type: TYPES[path.extname(f)] }]),
  );
}
