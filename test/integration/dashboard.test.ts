/// <reference lib="dom" />
// `kubectl neoset dashboard` in a real browser (Debian's Chromium, headless, driven by
// playwright-core) against the real control plane with the controller functions running. The seeds'
// mysql example (examples/mysql.yaml) is rolled out, watched on the page and driven only with its
// buttons, through the same steps and to the same end states as the CLI walkthrough in plugin.test.ts.
// Then what anyone else can do with it: without this run's token, nothing (SPEC §2.3, issue 19).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_STREAMS } from '../../bin/neoset/dashboard/app.ts';
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

interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** One request as curl sends it: any Host and Origin, no cookie unless given (a stream is not read). */
function curl(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      if (res.headers['content-type']?.startsWith('text/event-stream')) {
        res.destroy();
        return resolve({ status: res.statusCode!, body: '', headers: res.headers });
      }
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** A page's address without its #NAMESPACE/NAME selection. */
const withoutHash = (url: string) => url.replace(/#.*$/, '');

/** This machine's address as another machine reaches it (127.0.0.1 when it has no other). */
const lanAddress = () => Object.values(networkInterfaces()).flat().find((i) => i?.family === 'IPv4' && !i.internal)?.address ?? '127.0.0.1';

/**
 * What someone without the token gets from a dashboard at `base`: the page, a file of it, the state,
 * the stream, a guessed token, and the report's write (Host and Origin forged to match, JSON, curl).
 */
async function withoutToken(base: string): Promise<Record<string, number>> {
  const host = new URL(base).host;
  const headers = { host, origin: `http://${host}` };
  const at = (p: string) => new URL(p, base).toString();
  const guessed = await curl(at('/?token=guess'), { headers });
  expect(guessed.headers['set-cookie']).toBeUndefined();
  return {
    page: (await curl(at('/'), { headers })).status,
    script: (await curl(at('/app.js'), { headers })).status,
    state: (await curl(at('/api/state'), { headers })).status,
    stream: (await curl(at('/api/stream'), { headers })).status,
    guessed: guessed.status,
    pause: (await curl(at(`/api/neosets/${stack.namespace}/${NAME}/pause`), { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{}' })).status,
  };
}
const REFUSED = { page: 401, script: 401, state: 401, stream: 401, guessed: 401, pause: 401 };

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
  // A context of its own, so that another page (another site) can share its cookies.
  page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
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
    // The printed URL's token became a cookie the page's scripts cannot read, and left the address bar.
    expect(dashboard.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}$/);
    await expect.poll(() => withoutHash(page.url())).toBe(dashboard.base);
    expect(await page.context().cookies()).toEqual([
      expect.objectContaining({ name: `neoset-dashboard-${dashboard.port}`, value: dashboard.token, path: '/', httpOnly: true, sameSite: 'Strict' }),
    ]);
    expect(await page.evaluate(() => document.cookie)).toBe('');
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
  it("a cross-origin POST from another site's page does not reach the cluster, though the browser sends the cookie", async () => {
    // Another site: a page on another port, whose script posts to the dashboard (a "simple" request,
    // which a browser sends without asking first). Every port of 127.0.0.1 is the same *site*, so the
    // browser that holds the dashboard's SameSite=Strict cookie sends it along: the Origin refuses it.
    const evil = http.createServer((_req, res) => res.end('<html><body>another site</body></html>'));
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    const before = await readNeoSet(stack.client, stack.namespace, NAME);
    try {
      const other = await page.context().newPage();
      await other.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      const target = `${dashboard.base}api/neosets/${stack.namespace}/${NAME}/pause`;
      // What the browser sent and what became of it, as its network layer saw it (the raw headers,
      // cookies included, come from the DevTools protocol).
      const sentHeaders: Record<string, string>[] = [];
      const failures: string[] = [];
      const cdp = await other.context().newCDPSession(other);
      await cdp.send('Network.enable');
      cdp.on('Network.requestWillBeSentExtraInfo', (e) => {
        const headers = Object.fromEntries(Object.entries(e.headers).map(([k, v]) => [k.toLowerCase(), String(v)]));
        if (headers.host === new URL(dashboard.base).host) sentHeaders.push(headers);
      });
      other.on('requestfailed', (r) => void (r.url() === target && failures.push(r.failure()?.errorText ?? '')));
      const sent = await other.evaluate(async (url) => {
        const simple = await fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: '{}' }).then(() => 'sent', (e) => String(e));
        const json = await fetch(url, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: '{}' }).then(() => 'sent', (e) => String(e));
        return { simple, json };
      }, target);
      // The simple one reaches the server with the cookie (same site), is refused there for its Origin,
      // and its answer is withheld from the other site (Cross-Origin-Resource-Policy); the JSON one never
      // leaves the browser: its preflight (which carries no cookie) is not answered with CORS.
      expect(sent).toEqual({ simple: 'TypeError: Failed to fetch', json: 'TypeError: Failed to fetch' });
      expect(failures).toEqual(['net::ERR_BLOCKED_BY_RESPONSE.NotSameOrigin', 'net::ERR_FAILED']);
      const evilOrigin = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
      expect(sentHeaders.map((h) => [h['content-type'] ?? h['access-control-request-method'], h.origin, h['sec-fetch-site'], h.cookie])).toEqual([
        ['text/plain', evilOrigin, 'same-site', `neoset-dashboard-${dashboard.port}=${dashboard.token}`],
        ['POST', evilOrigin, 'same-site', undefined],
      ]);
      await other.close();
    } finally {
      evil.close();
    }
    // The same requests as plain HTTP with the cookie, to see the answers the browser hides from the other site.
    const cookie = `neoset-dashboard-${dashboard.port}=${dashboard.token}`;
    const refused = await fetch(`${dashboard.base}api/neosets/${stack.namespace}/${NAME}/pause`, {
      method: 'POST',
      headers: { cookie, origin: 'http://127.0.0.1:1', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(refused.status).toBe(403);
    // A rebound DNS name reaches 127.0.0.1 with the attacker's name as Host (fetch may not set Host: curl does).
    expect((await curl(`${dashboard.base}api/state`, { headers: { cookie, host: `attacker.example:${dashboard.port}` } })).status).toBe(403);
    const after = await readNeoSet(stack.client, stack.namespace, NAME);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.spec.updateStrategy.pause).toBe(false);
  });

  it('--read-only shows no buttons and refuses writes from its own page', async () => {
    const ro = await startDashboard({ cluster: { client: stack.client, namespace: stack.namespace, kubeConfig: stack.kc }, namespace: stack.namespace, port: 0, address: '127.0.0.1', readOnly: true });
    try {
      const p = await browser.newPage();
      await p.goto(ro.url);
      await expect.poll(() => withoutHash(p.url())).toBe(ro.base);
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

describe("without this run's token, nothing (issue 19: the dashboard obeyed anyone who could reach it)", () => {
  it('the printed URL followed as a link from another site (a chat, a ticket) opens the page, live, with its buttons', async () => {
    // localhost is another site than 127.0.0.1: a redirect after such a link would lose the SameSite=Strict cookie.
    const chat = http.createServer((_req, res) => res.end(`<html><body><a id="link" href="${dashboard.url}">the dashboard</a></body></html>`));
    await new Promise<void>((r) => chat.listen(0, '127.0.0.1', r));
    const fresh = await browser.newContext();
    try {
      const p = await fresh.newPage();
      await p.goto(`http://localhost:${(chat.address() as AddressInfo).port}/`);
      await p.click('#link');
      await expect.poll(() => p.locator('[data-pod]').count()).toBe(5);
      expect(await p.locator('[data-action="pause"]').count()).toBe(1);
      expect(withoutHash(p.url())).toBe(dashboard.base);
      expect(await p.evaluate(() => location.search)).toBe('');
    } finally {
      await fresh.close();
      chat.close();
    }
  });

  it('a tab left open while the dashboard is started again (a new token, the same port) says to open the new URL', async () => {
    const start = (port: number) => startDashboard({ cluster: { client: stack.client, namespace: stack.namespace, kubeConfig: stack.kc }, namespace: stack.namespace, port, address: '127.0.0.1', readOnly: true });
    const first = await start(0);
    const p = await browser.newPage();
    await p.goto(first.url);
    await expect.poll(() => p.locator('#connection').textContent()).toBe('live');
    await first.close();
    const second = await start(first.port);
    try {
      await expect.poll(() => p.locator('#connection').textContent(), { timeout: 15_000 }).toBe('refused: open the URL the dashboard printed');
    } finally {
      await p.close();
      await second.close();
    }
  });

  it('page, page file, state, stream and a button are refused (401) on 127.0.0.1; the NeoSet is not paused', async () => {
    const before = await readNeoSet(stack.client, stack.namespace, NAME);
    expect(await withoutToken(dashboard.base)).toEqual(REFUSED);
    const after = await readNeoSet(stack.client, stack.namespace, NAME);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.spec.updateStrategy.pause).toBe(false);
  });

  it(`on --address 0.0.0.0, reached by this machine's address with Host and Origin forged as in the report: 401, not paused; at most ${MAX_STREAMS} streams`, async () => {
    const open = await startDashboard({ cluster: { client: stack.client, namespace: stack.namespace, kubeConfig: stack.kc }, namespace: stack.namespace, port: 0, address: '0.0.0.0', readOnly: false });
    const streams: http.ClientRequest[] = [];
    try {
      const before = await readNeoSet(stack.client, stack.namespace, NAME);
      const base = `http://${lanAddress()}:${open.port}/`;
      expect(await withoutToken(base)).toEqual(REFUSED);
      const after = await readNeoSet(stack.client, stack.namespace, NAME);
      expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
      expect(after.spec.updateStrategy.pause).toBe(false);
      // With the token, a script reads the state; a client holding streams open cannot hold more than MAX_STREAMS.
      const authorization = `Bearer ${open.token}`;
      expect(JSON.parse((await curl(`${base}api/state`, { headers: { authorization } })).body).neosets.map((n: { name: string }) => n.name)).toEqual([NAME]);
      const stream = () =>
        new Promise<number>((resolve, reject) => {
          const req = http.get(`${base}api/stream`, { headers: { authorization } }, (res) => resolve(res.statusCode!));
          req.on('error', () => {});
          streams.push(req);
          setTimeout(() => reject(new Error('no answer')), 10_000).unref();
        });
      const statuses: number[] = [];
      for (let i = 0; i <= MAX_STREAMS; i++) statuses.push(await stream());
      expect(statuses).toEqual([...Array(MAX_STREAMS).fill(200), 503]);
      // A tab closed: its place is free again.
      streams[0].destroy();
      await expect.poll(stream).toBe(200);
    } finally {
      for (const s of streams) s.destroy();
      await open.close();
    }
  });
});

describe('the command', () => {
  const BIN = path.join(ROOT, 'bin');
  const env = { ...process.env, PATH: `${BIN}${path.delimiter}${process.env.PATH}`, KUBECONFIG: kubeconfigPath() };

  /** Runs `kubectl neoset dashboard ARGS` until its URL is printed: the URL, its output so far, and its stop. */
  async function command(args: string[]) {
    const { spawn } = await import('node:child_process');
    const child = spawn('kubectl', ['neoset', 'dashboard', '--port', '0', '-n', stack.namespace, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = { out: '', err: '' };
    child.stdout.setEncoding('utf8').on('data', (c: string) => (output.out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (output.err += c));
    const exited = new Promise<number | null>((r) => child.on('close', r));
    await expect.poll(() => output.out, { timeout: 20_000 }).toMatch(/at http:\S+\n/);
    const url = new URL(/(http:\S+)/.exec(output.out)![1]);
    // kubectl passes the signal on to the plugin it runs.
    const stop = () => (child.kill('SIGINT'), exited);
    return { url, output, stop };
  }

  it('kubectl neoset dashboard prints its URL with a new token, serves the page with it only, and exits 0 on Ctrl-C', async () => {
    const { url, output, stop } = await command([]);
    try {
      expect(output.out).toMatch(new RegExp(`^NeoSet dashboard \\(namespace ${stack.namespace}\\) at http://127\\.0\\.0\\.1:\\d+/\\?token=[\\w-]{43}\\nPress Ctrl-C to stop it\\.\\n$`));
      expect(output.err).toBe('');
      const token = url.searchParams.get('token')!;
      expect(token).not.toBe(dashboard.token);
      const state = (await (await fetch(`${url.origin}/api/state`, { headers: { authorization: `Bearer ${token}` } })).json()) as { neosets: { name: string }[] };
      expect(state.neosets.map((n) => n.name)).toEqual([NAME]);
      expect((await fetch(`${url.origin}/api/state`)).status).toBe(401);
    } finally {
      expect(await stop()).toBe(0);
    }
  });

  it('with --address 0.0.0.0 it warns on stderr, and the report\'s forged write (no token) is refused: the NeoSet is not paused', async () => {
    const before = await readNeoSet(stack.client, stack.namespace, NAME);
    const { url, output, stop } = await command(['--address', '0.0.0.0']);
    try {
      await expect.poll(() => output.err).toBe(
        `warning: --address 0.0.0.0 is not a loopback address: anyone who can reach port ${url.port} there and has the URL below can see your NeoSets and act on them with your Kubernetes credentials, and the URL (its token) travels unencrypted (plain HTTP). Prefer the default address and a tunnel from the other machine (ssh -L ${url.port}:127.0.0.1:${url.port} THIS-HOST), then open the URL there.\n`,
      );
      expect(await withoutToken(`http://${lanAddress()}:${url.port}/`)).toEqual(REFUSED);
    } finally {
      expect(await stop()).toBe(0);
    }
    const after = await readNeoSet(stack.client, stack.namespace, NAME);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.spec.updateStrategy.pause).toBe(false);
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
