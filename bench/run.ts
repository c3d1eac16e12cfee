// `npm run bench`: every benchmark in bench/ (each a plain script printing its own report), one after
// another on this Node, each in its own process so none warms another's caches.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = new URL('.', import.meta.url).pathname;
const scripts = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.endsWith('.test.ts'))
  .sort();
const only = process.argv.slice(2);
let failed = 0;
for (const script of scripts.filter((s) => only.length === 0 || only.some((o) => s.startsWith(o)))) {
  process.stdout.write(`\n== bench/${script}\n`);
  const r = spawnSync(process.execPath, [join(dir, script)], { stdio: 'inherit' });
  if (r.status !== 0) {
    failed++;
    process.stdout.write(`bench/${script} failed (${r.status ?? r.signal})\n`);
  }
}
process.exit(failed > 0 ? 1 : 0);
