/// <reference lib="dom" />
// `kubectl neoset dashboard` in a real browser (Debian's Chromium, headless, driven by
// playwright-core) against the real control plane with the controller functions running. The seeds'
// mysql example (examples/mysql.yaml) is rolled out, watched on the page and driven only with its
// buttons, through the same steps and to the same end states as the CLI walkthrough in plugin.test.ts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, type RunningDashboard } from '../../bin/neoset/dashboard/start.ts';
import { readNeoSet } from '../../bin/neoset/neosets.ts';
import { LABEL_REVISION_HASH } from '../../shared/api/names.ts';
import { launchChromium } from '../browser/chromium.ts';
import { kubeconfigPath, run } from '../cluster/harness.ts';
import { identities, imageOf, settledOn, untilStatus } from '../e2e/helpers.ts';
import { startStack, type Stack } from '../e2e/stack.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const NAME = 'mysql';
const CHANGE_CAUSE = 'kubernetes.io/change-cause';

let stack: Stack;
let dashboard: RunningDashboard;
let browser: Browser;
let page: Page;
const images = () => stack.observer.pods(NAME).map(imageOf);
const message = () => page.locator('#message');

/** Clicks a rollout button, confirms in the dialog (choosing `revision` for undo), and waits for the answer. */
async function button(id: string, revision?: number): Promise<string> {
  await page.locator('#message').evaluate((el) => (el.textContent = ''));
  await page.click(`[data-action="${id}"]`);
  await expect.poll(() => page.locator('#confirm').evaluate((d: HTMLDialogElement) => d.open)).toBe(true);
  if (revision !== undefined) await page.selectOption('#revision', String(revision));
  await page.click('#confirm-ok');
  await expect.poll(() => message().textContent(), { timeout: 10_000 }).toMatch(/^(neoset\.neo\.io|error)/);
  return (await message().textContent()) ?? '';
}

/** The pod cards as the page shows them: name → revision name. */
const shownRevisions = () => page.$$eval('[data-pod]', (els) => Object.fromEntries(els.map((e) => [(e as HTMLElement).dataset.pod, (e as HTMLElement).dataset.revision])));

/** Starts recording, in the page, when each pod card first shows each revision (page clock = this machine's). */
const recordColourChanges = () =>
  page.evaluate(() => {
    const w = window as unknown as { changes: { pod: string; revision: string; at: number }[] };
    w.changes = [];
    const seen = new Set<string>();
    const look = (record: boolean) => {
      for (const el of document.querySelectorAll<HTMLElement>('[data-pod]')) {
        const key = `${el.dataset.pod} ${el.dataset.revision}`;
        if (!seen.has(key)) {
          seen.add(key);
          if (record) w.changes.push({ pod: el.dataset.pod!, revision: el.dataset.revision!, at: Date.now() });
        }
      }
    };
    look(false); // what is shown already is no change
    new MutationObserver(() => look(true)).observe(document.getElementById('pods')!, { subtree: true, childList: true, attributes: true });
  });

/** For each pod moved to `revision`: ms from the watch seeing its label change to the page showing it. */
async function colourDelays(revision: string): Promise<Record<string, number>> {
  const changes = await page.evaluate(() => (window as unknown as { changes: { pod: string; revision: string; at: number }[] }).changes);
  const delays: Record<string, number> = {};
  for (const c of changes.filter((c) => c.revision === revision)) {
    const seen = stack.observer.podHistory.find((h) => h.pod.metadata.name === c.pod && h.pod.metadata.labels?.[LABEL_REVISION_HASH] === revision);
    if (seen) delays[c.pod] = c.at - seen.seenAt;
  }
  return delays;
}

beforeAll(async () => {
  stack = await startStack({ prefix: 'dashboard' });
  const applied = await stack.kubectl(['apply', '-f', '-'], readFileSync(path.join(ROOT, 'examples/mysql.yaml'), 'utf8'));
  expect(applied.stderr).toBe('');
  dashboard = await startDashboard({
    cluster: { client: stack.client, namespace: stack.namespace, kubeConfig: stack.kc },
    namespace: stack.namespace,
    port: 0,
    address: '127.0.0.1',
    readOnly: false,
  });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
});

afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  await stack?.stop();
});

describe("the seeds' mysql example, watched on the dashboard and driven only with its buttons", () => {
  let v1 = '';
  let v2 = '';
  let ids: ReturnType<typeof identities>;

  it('the page lists the NeoSet and shows its 5 pods by ordinal, all on revision 1', async () => {
    const n = await untilStatus(stack, NAME, '5 ready pods', (x, pods) => x.status?.readyReplicas === 5 && pods.length === 5);
    v1 = n.status!.updateRevision!;
    ids = identities(stack.observer.pods(NAME));
    await page.goto(dashboard.url);
    const row = page.locator(`[data-neoset="${stack.namespace}/${NAME}"]`);
    await expect.poll(() => row.textContent()).toContain(NAME);
    await expect.poll(shownRevisions).toEqual(Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`${NAME}-${i}`, v1])));
    expect(await page.locator('#legend').textContent()).toContain('rev 1: mysql=mysql:8.0');
  });

  it('keyboard: a button is reached and opened with the keyboard, and Escape cancels without writing', async () => {
    const before = (await readNeoSet(stack.client, stack.namespace, NAME)).metadata.resourceVersion;
    await page.focus('[data-action="pause"]');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#confirm').evaluate((d: HTMLDialogElement) => d.open)).toBe(true);
    expect(await page.locator('#confirm-command').textContent()).toBe(`kubectl neoset rollout pause ${NAME} -n ${stack.namespace}`);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('#confirm').evaluate((d: HTMLDialogElement) => d.open)).toBe(false);
    expect((await readNeoSet(stack.client, stack.namespace, NAME)).metadata.resourceVersion).toBe(before);
  });

  it('resume starts the staged canary: only mysql-4 moves, and its colour changes on the page within 1 s', async () => {
    // The user stages 8.1 for the canary (partition 4: only mysql-4), paused, as in the CLI walkthrough.
    await stack.kubectl(['annotate', 'neoset', NAME, `${CHANGE_CAUSE}=canary of mysql 8.1`]);
    await stack.kubectl(['patch', 'neoset', NAME, '--type', 'json', '-p', JSON.stringify([
      { op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'mysql:8.1' },
      { op: 'replace', path: '/spec/updateStrategy/partition', value: 4 },
      { op: 'add', path: '/spec/updateStrategy/pause', value: true },
    ])]);
    await untilStatus(stack, NAME, 'phase Paused', (n) => n.status?.phase === 'Paused');
    await recordColourChanges();
    expect(await button('resume')).toBe(`neoset.neo.io/${NAME} resumed`);
    const n = await untilStatus(stack, NAME, 'mysql-4 settled on 8.1', (x, pods) => x.status?.updatedReplicas === 1 && pods.every((p) => settledOn(p, p.metadata.name === `${NAME}-4` ? x.status?.updateRevision : v1)));
    v2 = n.status!.updateRevision!;
    expect(images()).toEqual(['mysql:8.0', 'mysql:8.0', 'mysql:8.0', 'mysql:8.0', 'mysql:8.1']);
    await expect.poll(shownRevisions).toMatchObject({ [`${NAME}-3`]: v1, [`${NAME}-4`]: v2 });
    const delays = await colourDelays(v2);
    expect(Object.keys(delays)).toEqual([`${NAME}-4`]);
    for (const ms of Object.values(delays)) expect(ms).toBeLessThan(1000);
  });

  it('pause sets spec.updateStrategy.pause on the API server; pausing twice says so', async () => {
    expect(await button('pause')).toBe(`neoset.neo.io/${NAME} paused`);
    expect((await readNeoSet(stack.client, stack.namespace, NAME)).spec.updateStrategy.pause).toBe(true);
    expect(await button('pause')).toBe(`neoset.neo.io/${NAME} is already paused`);
    await expect.poll(() => page.locator(`[data-neoset="${stack.namespace}/${NAME}"] .phase`).textContent()).toBe('Paused');
  });

  it('promote takes the next batch (partition 4 -> 3 with maxUnavailable 1) and resumes; the page shows the pod in its update', async () => {
    await recordColourChanges();
    expect(await button('promote')).toBe(`neoset.neo.io/${NAME} promoted: partition 4 -> 3, resumed`);
    await expect.poll(() => page.locator('.partition').getAttribute('data-partition')).toBe('3');
    await untilStatus(stack, NAME, 'mysql-3 settled on 8.1', (x, pods) => x.status?.updatedReplicas === 2 && pods.filter((p) => settledOn(p, v2)).length === 2);
    expect(images()).toEqual(['mysql:8.0', 'mysql:8.0', 'mysql:8.0', 'mysql:8.1', 'mysql:8.1']);
    for (const ms of Object.values(await colourDelays(v2))) expect(ms).toBeLessThan(1000);
  });

  it('pause and resume', async () => {
    expect(await button('pause')).toBe(`neoset.neo.io/${NAME} paused`);
    expect(await button('resume')).toBe(`neoset.neo.io/${NAME} resumed`);
    expect(await button('resume')).toBe(`neoset.neo.io/${NAME} is not paused`);
    await untilStatus(stack, NAME, 'resumed, Canary', (n) => !n.spec.updateStrategy.pause && n.status?.phase === 'Canary');
  });

  it('promote --full finishes the rollout: every pod on 8.1, in place', async () => {
    await recordColourChanges();
    expect(await button('promote-full')).toBe(`neoset.neo.io/${NAME} promoted: partition 3 -> 0`);
    if (process.env.NEOSET_SCREENSHOT) {
      // The README's picture: this rollout, with a pod in its in-place update.
      await page.waitForSelector('[data-in-place="Updating"], [data-in-place="Draining"]', { timeout: 10_000 }).catch(() => {});
      await page.screenshot({ path: path.resolve(ROOT, process.env.NEOSET_SCREENSHOT), fullPage: false });
    }
    await untilStatus(stack, NAME, 'Completed on 8.1', (x, pods) => x.status?.phase === 'Completed' && x.status.currentRevision === v2 && pods.every((p) => settledOn(p, v2)));
    expect(images()).toEqual(Array(5).fill('mysql:8.1'));
    expect(identities(stack.observer.pods(NAME))).toEqual(ids);
    await expect.poll(shownRevisions).toEqual(Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`${NAME}-${i}`, v2])));
    const delays = await colourDelays(v2);
    expect(Object.keys(delays).sort()).toEqual([`${NAME}-0`, `${NAME}-1`, `${NAME}-2`]);
    for (const ms of Object.values(delays)) expect(ms).toBeLessThan(1000);
    expect(await button('promote')).toBe(`neoset.neo.io/${NAME} is already fully promoted (partition 0, not paused)`);
  });

  it('the revision history shows both revisions with images, roles and change-causes', async () => {
    const rows = await page.$$eval('#history tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())));
    expect(rows).toEqual([
      ['2', v2, 'current, update', 'mysql=mysql:8.1', 'canary of mysql 8.1'],
      ['1', v1, '', 'mysql=mysql:8.0', '<none>'],
    ]);
  });

  it('undo to revision 1 brings every pod back to 8.0 in place; undoing to it again says it is already there', async () => {
    expect(await button('undo', 1)).toBe(`neoset.neo.io/${NAME} rolled back to revision 1 (mysql=mysql:8.0)`);
    await untilStatus(stack, NAME, 'Completed on 8.0', (x, pods) => x.status?.phase === 'Completed' && x.status.currentRevision === v1 && pods.every((p) => settledOn(p, v1)));
    expect(images()).toEqual(Array(5).fill('mysql:8.0'));
    expect(identities(stack.observer.pods(NAME))).toEqual(ids);
    // The controller renumbered revision 1 to 3, as with the CLI: the dialog now offers 3 and 2.
    await expect.poll(() => page.$$eval('#history tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-revision')))).toEqual(['3', '2']);
    expect(await button('undo', 3)).toBe(`neoset.neo.io/${NAME} skipped rollback (current template already matches revision 3)`);
    await expect.poll(shownRevisions).toEqual(Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`${NAME}-${i}`, v1])));
  });

  it('no invariant was violated in any observed state', () => {
    expect(stack.observer.violations).toEqual([]);
  });
});

describe('writes from anywhere else are refused', () => {
  it("a cross-origin POST from another site's page does not reach the cluster", async () => {
    // Another site: a page on another port, whose script posts to the dashboard (a "simple" request,
    // which a browser sends without asking first).
    const evil = http.createServer((_req, res) => res.end('<html><body>another site</body></html>'));
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    const before = await readNeoSet(stack.client, stack.namespace, NAME);
    try {
      const other = await browser.newPage();
      await other.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      const target = `${dashboard.url}api/neosets/${stack.namespace}/${NAME}/pause`;
      const sent = await other.evaluate(async (url) => {
        const simple = await fetch(url, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{}' }).then(() => 'sent', (e) => String(e));
        const json = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then(() => 'sent', (e) => String(e));
        return { simple, json };
      }, target);
      // The simple one reaches the server (and is refused there); the JSON one is stopped by the browser's preflight.
      expect(sent.simple).toBe('sent');
      expect(sent.json).toMatch(/TypeError: Failed to fetch/);
      await other.close();
    } finally {
      evil.close();
    }
    // The same requests as plain HTTP, to see the answers the browser hides from the other site.
    const refused = await fetch(`${dashboard.url}api/neosets/${stack.namespace}/${NAME}/pause`, {
      method: 'POST',
      headers: { origin: 'http://127.0.0.1:1', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(refused.status).toBe(403);
    // A rebound DNS name reaches 127.0.0.1 with the attacker's name as Host (fetch may not set Host: http.get).
    const rebound = await new Promise<number | undefined>((resolve, reject) =>
      http.get(`${dashboard.url}api/state`, { headers: { host: `attacker.example:${dashboard.port}` } }, (res) => resolve(res.resume().statusCode)).on('error', reject),
    );
    expect(rebound).toBe(403);
    const after = await readNeoSet(stack.client, stack.namespace, NAME);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.spec.updateStrategy.pause).toBe(false);
  });

  it('--read-only shows no buttons and refuses writes from its own page', async () => {
    const ro = await startDashboard({ cluster: { client: stack.client, namespace: stack.namespace, kubeConfig: stack.kc }, namespace: stack.namespace, port: 0, address: '127.0.0.1', readOnly: true });
    try {
      const p = await browser.newPage();
      await p.goto(ro.url);
      await expect.poll(() => p.locator('[data-pod]').count()).toBe(5);
      expect(await p.locator('[data-action]').count()).toBe(0);
      expect(await p.locator('#read-only').isVisible()).toBe(true);
      const status = await p.evaluate(async () => (await fetch('/api/neosets/x/y/pause', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status);
      expect(status).toBe(403);
      await p.close();
    } finally {
      await ro.close();
    }
  });
});

describe('the command', () => {
  const BIN = path.join(ROOT, 'bin');
  const env = { ...process.env, PATH: `${BIN}${path.delimiter}${process.env.PATH}`, KUBECONFIG: kubeconfigPath() };

  it('kubectl neoset dashboard prints its URL, serves the page, and exits 0 on Ctrl-C', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn('kubectl', ['neoset', 'dashboard', '--port', '0', '-n', stack.namespace], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    const exited = new Promise<number | null>((r) => child.on('close', r));
    await expect.poll(() => out, { timeout: 20_000 }).toMatch(/at http:\/\/127\.0\.0\.1:\d+\/\n/);
    expect(out).toMatch(new RegExp(`^NeoSet dashboard \\(namespace ${stack.namespace}\\) at http://127\\.0\\.0\\.1:\\d+/\\nPress Ctrl-C to stop it\\.\\n$`));
    const url = /(http:\S+)/.exec(out)![1];
    const state = (await (await fetch(`${url}api/state`)).json()) as { neosets: { name: string }[] };
    expect(state.neosets.map((n) => n.name)).toEqual([NAME]);
    // kubectl passes the signal on to the plugin it runs.
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });

  it('a bad command line is exit 2 naming it; an unreachable API server exit 3, as for every command', async () => {
    const both = await run('kubectl', ['neoset', 'dashboard', '-n', 'a', '--all-namespaces'], { env });
    expect(both).toEqual({ code: 2, stdout: '', stderr: "error: --namespace and --all-namespaces cannot be used together\nSee 'kubectl neoset dashboard --help' for usage.\n" });
    const port = await run('kubectl', ['neoset', 'dashboard', '--port', 'http'], { env });
    expect(port.code).toBe(2);
    expect(port.stderr).toMatch(/^error: invalid value "http" for --port: /);
    const unreachable = path.join(mkdtempSync(path.join(tmpdir(), 'dashboard-')), 'kubeconfig');
    writeFileSync(unreachable, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n');
    const gone = await run('kubectl', ['neoset', 'dashboard', '--kubeconfig', unreachable], { env });
    expect(gone.code).toBe(3);
    expect(gone.stderr).toMatch(/^error: cannot reach the API server: /);
  });
});
