// Where the browser tests find Chromium: $CHROMIUM_PATH, else Debian's package (/usr/bin/chromium),
// else whichever chromium is on PATH. Nothing is downloaded: playwright-core drives the one installed.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];

export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.CHROMIUM_PATH) return existsSync(env.CHROMIUM_PATH) ? env.CHROMIUM_PATH : undefined;
  const found = CANDIDATES.find((p) => existsSync(p));
  if (found) return found;
  for (const name of ['chromium', 'chromium-browser']) {
    const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  }
  return undefined;
}

/** Headless Chromium, driven by playwright-core (which downloads no browser of its own). */
export async function launchChromium() {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no Chromium: install Debian\'s chromium package (npm test does when root) or set CHROMIUM_PATH');
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath, headless: true });
}
