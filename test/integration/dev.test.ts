// The local system of issue #5, tried as a user would: the bundled functions run directly (the
// image's entrypoint), and `npm run dev` (dev/main.ts) brought up, driven through an in-place rollout
// of examples/mysql.yaml with kubectl, a recorded event replayed in binary and structured mode, the
// state gauges read, and Ctrl-C leaving no process behind.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../../scripts/build.ts';
import { createTestNamespace, kubeconfigPath, kubectl, run, type TestNamespace } from '../cluster/harness.ts';
import { createCa, issueServingCert } from '../../dev/cluster/certs.ts';
import { freePorts } from '../../dev/cluster/ports.ts';
import { probe } from '../../dev/cluster/probe.ts';
import { isAlive } from '../../dev/cluster/local-cluster.ts';
import { poll } from '../../dev/cluster/wait.ts';
import { resolveKn } from '../../dev/cluster/binaries.ts';
import { pressCtrlCOnKnative } from '../e2e/footprint.ts';
import { kubectlOn, readmeWalkthrough } from '../e2e/readme-walkthrough.ts';
import { startKnativeDev, STOP_WITHIN_MS, untilOutput, type Dev } from '../e2e/terminal.ts';

const REPO_ROOT = new URL('../..', import.meta.url).pathname;
const EXAMPLE = join(REPO_ROOT, 'examples', 'mysql.yaml');
const EVENTS = join(REPO_ROOT, 'examples', 'events');
const PACKAGE_VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

const neosetOf = (file: string) => parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS()).find((o) => o.kind === 'NeoSet');

/** Non-GET API requests a function instance has made, from its own /metrics. */
const writesIn = (metrics: string) =>
  metrics
    .split('\n')
    .filter((l) => l.startsWith('neoset_api_requests_total{') && !l.includes('verb="get"'))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);

/** Replays a saved event in both modes, as the README's curl commands do. */
async function replay(url: string, base: string): Promise<{ status: number; body: string }[]> {
  const headers = Object.fromEntries(
    readFileSync(`${base}.headers`, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
  );
  const answers = [];
  for (const init of [
    { headers, body: readFileSync(`${base}.data.json`) },
    { headers: { 'content-type': 'application/cloudevents+json' }, body: readFileSync(`${base}.json`) },
  ]) {
    const res = await fetch(url, { method: 'POST', ...init });
    answers.push({ status: res.status, body: await res.text() });
  }
  return answers;
}

describe('bundled functions (dist/, the image entrypoint)', () => {
  let out: string;
  let ns: TestNamespace;
  const children: ChildProcessWithoutNullStreams[] = [];

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'neoset-dist-'));
    await build(out);
    ns = await createTestNamespace('bundles');
    const r = await kubectl(['-n', ns.name, 'apply', '-f', '-'], { input: stringify(neosetOf(EXAMPLE)) });
    expect(r.stderr).toBe('');
  });
  afterAll(async () => {
    for (const c of children) c.kill('SIGTERM');
    await ns?.cleanup();
    rmSync(out, { recursive: true, force: true });
  });

  const start = async (fn: string, env: Record<string, string> = {}) => {
    const [port] = await freePorts(1);
    const child = spawn(process.execPath, [join(out, 'main.mjs')], {
      env: { ...process.env, NEOSET_FUNCTION: fn, PORT: String(port), HOST: '127.0.0.1', KUBECONFIG: kubeconfigPath(), LOG_LEVEL: 'warn', ...env },
    });
    children.push(child);
    return { port, child };
  };

  it('reconcile and readiness answer /healthz, replayed events (empty 2xx), and reconcile shows the state gauges on its metrics port', async () => {
    for (const fn of ['reconcile', 'readiness']) {
      const [metricsPort] = await freePorts(1);
      const { port } = await start(fn, { METRICS_PORT: String(metricsPort) });
      const url = `http://127.0.0.1:${port}`;
      await poll(`${fn} /healthz`, async () => ((await probe(`${url}/healthz`))?.status === 200 ? true : undefined), { timeoutMs: 20_000 });
      // The bundle runs outside the checkout, with no package.json near it: the version was written in.
      expect(JSON.parse((await probe(`${url}/healthz`))!.body)).toEqual({ status: 'ok', function: fn, version: PACKAGE_VERSION });
      // Not the resync tick: it would reconcile every NeoSet of the shared test cluster. These name
      // default/mysql, which does not exist here: a no-op, answered like any other event.
      for (const event of ['0001-neoset-mysql-add', '0002-neoset-mysql-update', '0003-pod-mysql-4-update']) {
        expect(await replay(`${url}/`, join(EVENTS, event)), `${fn} ${event}`).toEqual([
          { status: 200, body: '' },
          { status: 200, body: '' },
        ]);
      }
      const metrics = (await probe(`${url}/metrics`))!.body;
      expect(metrics).toContain('neoset_reconcile_total');
      expect(metrics).toContain(`neoset_build_info{version="${PACKAGE_VERSION}",function="${fn}",node="${process.versions.node}"} 1`);
      if (fn === 'reconcile') {
        // The state gauges name every NeoSet: on METRICS_PORT only, never on the event port (SPEC §2.5).
        expect(metrics).not.toContain(`neoset="mysql"`);
        const served = (await probe(`http://127.0.0.1:${metricsPort}/metrics`))!.body;
        expect(served).toContain(`neoset_replicas{namespace="${ns.name}",neoset="mysql"} 5`);
        expect(served).toContain('neoset_state_up 1');
      }
    }
  });

  it('the Dockerfile copies what its entrypoint needs from the build (bundles, source maps, licences), on the Node release the tests run', () => {
    const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
    const copy = /^COPY --from=build (.+) \/app\/$/m.exec(dockerfile)![1].split(' ');
    const built = readdirSync(out);
    for (const source of copy) {
      const suffix = source.replace('/src/dist/*', '');
      expect(built.filter((f) => f.endsWith(suffix)).length, `${source} matches the build's output`).toBeGreaterThan(0);
    }
    for (const fn of ['reconcile', 'readiness', 'admission']) expect(built).toContain(`${fn}.mjs.map`);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["node", "--enable-source-maps", "--max-old-space-size-percentage=50", "--max-semi-space-size=8", "\/app\/main\.mjs"\]$/m);
    // glibc's settings memory-bounded.test.ts measures the functions with.
    expect(dockerfile).toMatch(/^ {4}MALLOC_ARENA_MAX=2 \\$/m);
    expect(dockerfile).toMatch(/^ {4}MALLOC_MMAP_THRESHOLD_=131072$/m);
    expect(/^ARG NODE_IMAGE=node:([\d.]+)-/m.exec(dockerfile)![1]).toBe(process.versions.node);
    // The last stage is one layer: npm removed in an earlier stage is not in the image at all.
    const stages = dockerfile.split('\n').filter((l) => l.startsWith('FROM '));
    expect(stages.at(-1)).toBe('FROM scratch');
    expect(dockerfile).toContain('COPY --from=runtime / /');
  });

  it('admission serves https with the certificate it is given; main.mjs refuses an unknown function', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'neoset-tls-'));
    try {
      const ca = await createCa();
      const cert = await issueServingCert(ca);
      const write = (name: string, pem: string) => {
        writeFileSync(join(dir, name), pem, { mode: 0o600 });
        return join(dir, name);
      };
      const { port } = await start('admission', { TLS_CERT_FILE: write('tls.crt', cert.certPem), TLS_KEY_FILE: write('tls.key', cert.keyPem) });
      const healthy = await poll('admission /healthz', async () => ((await probe(`https://127.0.0.1:${port}/healthz`, { ca: ca.certPem }))?.status === 200 ? true : undefined), {
        timeoutMs: 20_000,
      });
      expect(healthy).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const wrong = spawnSync(process.execPath, [join(out, 'main.mjs'), 'nope'], { encoding: 'utf8' });
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain('reconcile, readiness, admission');
  });
});

describe('npm run dev -- --bridge', () => {
  let dir: string;
  let dev: ChildProcessWithoutNullStreams;
  let stdout = '';
  let kubeconfig = '';
  let reconcileUrl = '';
  const pids: number[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'neoset-dev-'));
    const ports = ['--reconcile-port', '0', '--readiness-port', '0', '--admission-port', '0'];
    dev = spawn(process.execPath, ['dev/main.ts', '--bridge', '--dir', dir, '--record', join(dir, 'events'), '--resync-ms', '1000', ...ports], { cwd: REPO_ROOT });
    dev.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    dev.stderr.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    await poll('NeoSet dev stack ready', async () => {
      if (dev.exitCode !== null) throw new Error(`npm run dev exited ${dev.exitCode}:\n${stdout}`);
      return stdout.includes('NeoSet dev stack ready') ? true : undefined;
    }, { timeoutMs: 180_000, intervalMs: 200 });
    kubeconfig = /^export KUBECONFIG=(.*)$/m.exec(stdout)![1];
    reconcileUrl = /reconcile (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)![1];
    for (const m of stdout.matchAll(/\(pid (\d+)/g)) pids.push(Number(m[1]));
  }, 200_000);

  afterAll(async () => {
    if (dev && dev.exitCode === null) dev.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the kubeconfig it wrote, then the ready line', () => {
    expect(kubeconfig).toBe(join(dir, 'kubeconfig'));
    expect(existsSync(kubeconfig)).toBe(true);
    expect(stdout.indexOf('export KUBECONFIG=')).toBeLessThan(stdout.indexOf('NeoSet dev stack ready'));
    expect(pids.length).toBe(6); // etcd, kube-apiserver, kube-controller-manager, three functions
  });

  it('drives examples/mysql.yaml through an in-place rollout to a new image', async () => {
    const { before, after } = await readmeWalkthrough(kubeconfig);
    expect(after.map((p) => p.spec.containers[0].image)).toEqual(Array(5).fill('mysql:8.1'));
    // In place: the same pods (uid), not new ones.
    expect(Object.fromEntries(after.map((p) => [p.metadata.name, p.metadata.uid]))).toEqual(Object.fromEntries(before.map((p) => [p.metadata.name, p.metadata.uid])));
  });

  it('replays a recorded event in binary and structured mode: empty 2xx, no write', async () => {
    const recorded = readdirSync(join(dir, 'events')).filter((f) => /-neoset-mysql-update\.json$/.test(f)).sort();
    expect(recorded.length).toBeGreaterThan(0);
    const base = join(dir, 'events', recorded.at(-1)!.replace(/\.json$/, ''));
    const writes = async () => writesIn((await probe(`${reconcileUrl}/metrics`))!.body);
    // Settled: no write between two reads a couple of resync ticks apart.
    let last = -1;
    await poll('reconcile to stop writing', async () => {
      const now = await writes();
      const quiet = now === last;
      last = now;
      return quiet ? true : undefined;
    }, { timeoutMs: 30_000, intervalMs: 2500 });
    expect(await replay(`${reconcileUrl}/`, base)).toEqual([
      { status: 200, body: '' },
      { status: 200, body: '' },
    ]);
    expect(await writes()).toBe(last);
  });

  it("shows the cluster's NeoSets in reconcile's /metrics on its metrics port, none on its event port (SPEC §2.5)", async () => {
    const metricsUrl = /reconcile: http:\S+ \(pid \d+, metrics (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(stdout)![1];
    expect((await probe(`${reconcileUrl}/metrics`))!.body).not.toContain('neoset="mysql"');
    const metrics = (await probe(metricsUrl))!.body;
    expect(metrics).toContain('neoset_replicas{namespace="default",neoset="mysql"} 5');
    expect(metrics).toContain('neoset_updated_replicas{namespace="default",neoset="mysql"} 5');
    expect(metrics).toContain('neoset_phase{namespace="default",neoset="mysql"} 4'); // Completed
  });

  it('allows the analysis address README "Automated canary" uses and refuses another, naming the allowed one; reconcile holds on it (SPEC §2.3)', async () => {
    const k = (args: string[], input?: string) => spawnSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { input, encoding: 'utf8' });
    const web = neosetOf(join(REPO_ROOT, 'examples', 'web-canary.yaml'));
    const withAddress = (address: string) => {
      const n = structuredClone(web);
      n.spec.updateStrategy.canary.analysis.prometheus = { address, query: 'up', successCondition: 'result == 1' };
      return JSON.stringify(n);
    };
    const refused = k(['apply', '-f', '-'], withAddress('http://10.0.0.1:9090'));
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('spec.updateStrategy.canary.analysis.prometheus.address: "http://10.0.0.1:9090" is not a Prometheus address this install allows; allowed (NEOSET_ANALYSIS_ADDRESSES): http://prometheus.invalid:9090');
    const created = k(['apply', '-f', '-'], withAddress('http://prometheus.invalid:9090'));
    expect(created.status, created.stderr).toBe(0);
    const jsonpath = (path: string) => k(['get', 'neo', 'web', '-o', `jsonpath=${path}`]).stdout;
    await poll('web: 5 ready pods', async () => (jsonpath('{.status.readyReplicas}') === '5' ? true : undefined), { timeoutMs: 60_000, intervalMs: 500 });
    const patched = k(['patch', 'neo', 'web', '--type', 'json', '-p', '[{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:1.27"}]']);
    expect(patched.status, patched.stderr).toBe(0);
    const message = await poll('web: held by the analysis', async () => {
      const m = jsonpath('{.status.conditions[?(@.type=="Paused")].message}');
      return m.includes('analysis inconclusive') ? m : undefined;
    }, { timeoutMs: 60_000, intervalMs: 500 });
    expect(message).toBe('step 1/5: analysis inconclusive: Prometheus at http://prometheus.invalid:9090: unreachable (ENOTFOUND)');
    expect(k(['delete', 'neo', 'web', '--wait=false']).status).toBe(0);
  });

  it('stops everything it started on Ctrl-C (SIGINT)', async () => {
    dev.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => (dev.exitCode !== null ? resolve(dev.exitCode) : dev.once('exit', resolve)));
    expect(code).toBe(0);
    expect(pids.filter(isAlive)).toEqual([]);
    expect(existsSync(kubeconfig)).toBe(false);
  }, 60_000);
});

// The default mode: the real Knative beneath NeoSet (dev/knative-stack.ts), on its default layout —
// Knative Serving and Eventing, NeoSet deployed with `kubectl apply -k knative/` — and on the
// eventing-only layout (`--eventing-only`), which keeps its walkthrough. Each claims the machine's
// service network: run this file under `flock /tmp/neoset-service-network.lock`.
type PodJson = { metadata: { name: string; labels?: Record<string, string> }; spec: { containers: { name: string; image: string }[] }; status: { phase: string; podIP?: string } };

describe('npm run dev (the real Knative Serving and Eventing, the default)', () => {
  let dev: Dev;
  let kubeconfig = '';
  let readyInS = 0;
  /** From `npm run dev`'s spawn to its ready line, as a user at the terminal counts. */
  let spawnToReadyS = 0;
  const k = (args: string[]) => kubectlOn(kubeconfig)(args);
  const pods = (namespace: string, selector?: string) => JSON.parse(k(['get', 'pods', '-n', namespace, ...(selector ? ['-l', selector] : []), '-o', 'json'])).items as PodJson[];

  beforeAll(async () => {
    const spawned = Date.now();
    dev = startKnativeDev();
    await untilOutput(dev, 'NeoSet dev stack ready', 240_000);
    spawnToReadyS = (Date.now() - spawned) / 1000;
    kubeconfig = /^export KUBECONFIG=(.*)$/m.exec(dev.output())![1];
    readyInS = Number(/NeoSet dev stack ready in ([\d.]+) s/.exec(dev.output())![1]);
    console.log(`[dev serving] ready line ${spawnToReadyS.toFixed(1)} s after npm run dev (${readyInS} s after dev/main.ts started), load average ${loadavg()[0].toFixed(1)}:\n${dev.output()}`);
  }, 270_000);

  afterAll(async () => {
    if (dev && dev.child.exitCode === null) await pressCtrlCOnKnative(dev);
    if (dev) rmSync(dev.dir, { recursive: true, force: true });
  });

  it("prints what runs and how to see Knative's objects, the kubeconfig, then the ready line", () => {
    const out = dev.output();
    expect(out).toContain('kubectl get brokers,triggers,apiserversources,pingsources -A');
    expect(out).toContain('kubectl get ksvc,revisions -n neoset-system');
    expect(out).toContain('Knative Eventing v0.50.0');
    expect(out).toContain('Knative Serving v0.50.0 in knative-serving');
    expect(out).toContain('Traefik v3.7.13');
    expect(out).toContain('NeoSet as deployed on Knative (kubectl apply -k knative/)');
    expect(out).toMatch(/NeoSet dev stack ready in [\d.]+ s on the real Knative Serving and Eventing v0\.50\.0: kube-apiserver v1\.37\.2 at https:\/\/10\.245\.0\.1:\d+/);
    expect(out).not.toContain('event bridge');
    expect(kubeconfig).toBe(join(dev.dir, 'kubeconfig'));
    expect(out.indexOf('export KUBECONFIG=')).toBeLessThan(out.indexOf('NeoSet dev stack ready'));
    // A bound that only a hang or a lost step misses (the 2 shared cores, the other lane running).
    expect(spawnToReadyS).toBeLessThanOrEqual(180);
  });

  it("kubectl get pods: Knative Eventing's, Serving's and Traefik's components Running, each with a pod IP", () => {
    console.log(k(['get', 'pods', '-A', '-o', 'wide']));
    const components: Record<string, string[]> = {
      'knative-eventing': ['eventing-controller', 'eventing-webhook', 'imc-controller', 'imc-dispatcher', 'mt-broker-controller', 'mt-broker-filter', 'mt-broker-ingress'],
      'knative-serving': ['activator', 'autoscaler', 'controller', 'webhook'],
      traefik: ['traefik'],
    };
    for (const [namespace, names] of Object.entries(components)) {
      const running = pods(namespace);
      for (const component of names) expect(running.map((p) => p.metadata.name).some((n) => n.startsWith(`${component}-`)), component).toBe(true);
      for (const pod of running) {
        expect(pod.status.phase, pod.metadata.name).toBe('Running');
        expect(pod.status.podIP, pod.metadata.name).toMatch(/^10\.244\.\d+\.\d+$/);
      }
    }
  });

  it('kn service list -n neoset-system: both functions Ready; each pod the function beside queue-proxy; the Triggers, Broker and sources Ready', async () => {
    const kn = spawnSync(await resolveKn(), ['service', 'list', '-n', 'neoset-system', '--kubeconfig', kubeconfig], { encoding: 'utf8' });
    console.log(`[dev serving] kn service list -n neoset-system:\n${kn.stdout}${kn.stderr}`);
    expect(kn.status).toBe(0);
    const rows = kn.stdout.trim().split('\n').slice(1).map((line) => line.trim().split(/\s+/));
    expect(rows.map((r) => r[0])).toEqual(['neoset-dead-letter', 'neoset-readiness', 'neoset-reconcile']);
    // A ksvc's READY column: True (its columns: NAME URL LATEST AGE CONDITIONS(3 OK / 3) READY).
    for (const row of rows) expect(row.at(-1), row[0]).toBe('True');
    const functionPods = pods('neoset-system', 'app.kubernetes.io/component in (reconcile,readiness)');
    console.log(`[dev serving] function pods: ${functionPods.map((p) => `${p.metadata.name} [${p.spec.containers.map((c) => `${c.name} ${c.image}`).join(', ')}]`).join('; ')}`);
    const reconcile = functionPods.filter((p) => p.metadata.labels?.['app.kubernetes.io/component'] === 'reconcile');
    expect(reconcile.length).toBeLessThanOrEqual(1); // min-scale 0 (SPEC §2.4): at zero once the fast tick is gone
    for (const pod of functionPods) expect(pod.spec.containers.map((c) => c.name), pod.metadata.name).toEqual([pod.metadata.labels!['app.kubernetes.io/component'], 'queue-proxy']);
    const table = k(['get', 'triggers', '-n', 'neoset-system']).trim().split('\n');
    const ready = table[0].split(/\s+/).indexOf('READY');
    const triggers = table.slice(1).map((line) => line.split(/\s+/));
    expect(triggers.map((r) => r[0]).sort()).toEqual(['neoset-readiness-pods', 'neoset-reconcile-neosets', 'neoset-reconcile-pods', 'neoset-reconcile-resync', 'neoset-reconcile-rollout-tick']);
    for (const row of triggers) expect(row[ready], row[0]).toBe('True');
    const readyOf = (kind: string) => JSON.parse(k(['get', kind, '-n', 'neoset-system', '-o', 'json'])).items.map((o: { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } }) => [o.metadata.name, o.status?.conditions?.find((c) => c.type === 'Ready')?.status]);
    expect(readyOf('brokers')).toEqual([['neoset', 'True']]);
    expect(readyOf('apiserversources')).toEqual([['neoset-neosets', 'True'], ['neoset-pods', 'True']]);
    // The Triggers call the Knative Services at their cluster-local addresses (Traefik's private Service routes them).
    const subscribers = JSON.parse(k(['get', 'triggers', '-n', 'neoset-system', '-o', 'json'])).items.map((t: { status?: { subscriberUri?: string } }) => t.status?.subscriberUri);
    expect(new Set(subscribers)).toEqual(new Set(['http://neoset-reconcile.neoset-system.svc.cluster.local', 'http://neoset-readiness.neoset-system.svc.cluster.local']));
  });

  it('drives examples/mysql.yaml through an in-place rollout, every event through the real Broker to the Knative Services', async () => {
    const walk = Date.now();
    const { before, after } = await readmeWalkthrough(kubeconfig);
    console.log(`[dev serving] README walkthrough (apply, 5 Ready, patch, rollout Completed) in ${((Date.now() - walk) / 1000).toFixed(1)} s`);
    expect(after.map((p) => p.spec.containers[0].image)).toEqual(Array(5).fill('mysql:8.1'));
    expect(Object.fromEntries(after.map((p) => [p.metadata.name, p.metadata.uid]))).toEqual(Object.fromEntries(before.map((p) => [p.metadata.name, p.metadata.uid])));
    // reconcile (a revision's pod) says so itself on its METRICS_PORT, at the pod's IP; its event port
    // (the user port queue-proxy forwards to) names no NeoSet (SPEC §2.5).
    const pod = pods('neoset-system', 'app.kubernetes.io/component=reconcile').find((p) => p.status.podIP)!;
    expect((await probe(`http://${pod.status.podIP}:8080/metrics`))!.body).not.toContain('neoset="mysql"');
    const metrics = (await probe(`http://${pod.status.podIP}:9095/metrics`))!.body;
    expect(metrics).toContain('neoset_replicas{namespace="default",neoset="mysql"} 5');
    expect(metrics).toContain('neoset_updated_replicas{namespace="default",neoset="mysql"} 5');
    expect(metrics).toMatch(/neoset_reconcile_total\{result="ok"\} [1-9]/);
    // The pods' logs followed as --bridge follows its processes' (readiness's pod too, woken from zero or not).
    expect(dev.output()).toMatch(/ reconcile \w+ neoset default\/mysql → default\/mysql ok: /);
    expect(dev.output()).toMatch(/ readiness update pod default\/mysql-\d → default\/mysql ok: setInPlaceReady/);
  });

  it('kubectl neoset version finds the three functions (two Knative Services, admission a Deployment) and asks each running one its version (issue 35, point 7)', async () => {
    const r = await run('kubectl', ['neoset', 'version'], { env: { ...process.env, PATH: `${join(REPO_ROOT, 'bin')}:${process.env.PATH}`, KUBECONFIG: kubeconfig } });
    console.log(`[dev serving] kubectl neoset version (exit ${r.code}):\n${r.stdout}${r.stderr}`);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const rows = Object.fromEntries(r.stdout.split('\n').slice(2, 5).map((line) => line.split(/\s{3,}/)).map((row) => [row[0], row]));
    expect(rows.reconcile).toEqual(['reconcile', PACKAGE_VERSION, expect.stringMatching(/^\/healthz of revision neoset-reconcile-00001 of ksvc neoset-system\/neoset-reconcile through the API server's service proxy/)]);
    // readiness (min-scale 0) may have scaled to zero since the walkthrough: then its image tag, not woken.
    expect(rows.readiness[2]).toMatch(/^(\/healthz of|scaled to zero, not woken: image tag of) revision neoset-readiness-00001 of ksvc neoset-system\/neoset-readiness/);
    expect(rows.admission).toEqual(['admission', PACKAGE_VERSION, "/healthz through the API server's service proxy (service neoset-system/neoset-admission)"]);
  });

  it('stops everything it started on Ctrl-C: processes, network namespaces, veths, bridge, nftables tables', async () => {
    const { code, ms, before, left } = await pressCtrlCOnKnative(dev);
    console.log(`[dev serving] after the rollout: ${before.processes.length} processes, ${before.netns.length} network namespaces, ${before.links.length} links, tables ${before.tables.join(', ')} gone ${ms} ms after SIGINT, exit ${code}`);
    expect(left, dev.output()).toEqual({ netns: [], links: [], tables: [], processes: [] });
    expect(ms).toBeLessThanOrEqual(STOP_WITHIN_MS);
    expect(code, dev.output().split('\n').slice(-12).join('\n')).toBe(0);
    expect(existsSync(kubeconfig)).toBe(false);
  }, 30_000);
});

describe('npm run dev -- --eventing-only (knative/eventing-only/: the functions as Deployments, no Serving)', () => {
  let dev: Dev;
  let kubeconfig = '';
  const k = (args: string[]) => kubectlOn(kubeconfig)(args);

  beforeAll(async () => {
    const spawned = Date.now();
    dev = startKnativeDev(['--eventing-only']);
    await untilOutput(dev, 'NeoSet dev stack ready', 120_000);
    kubeconfig = /^export KUBECONFIG=(.*)$/m.exec(dev.output())![1];
    console.log(`[dev eventing-only] ready line ${((Date.now() - spawned) / 1000).toFixed(1)} s after npm run dev, load average ${loadavg()[0].toFixed(1)}:\n${dev.output()}`);
  }, 150_000);

  afterAll(async () => {
    if (dev && dev.child.exitCode === null) await pressCtrlCOnKnative(dev);
    if (dev) rmSync(dev.dir, { recursive: true, force: true });
  });

  it('runs no Knative Serving: the functions are Deployments behind v1 Services, fed by the real Broker', () => {
    const out = dev.output();
    expect(out).toMatch(/NeoSet dev stack ready in [\d.]+ s on the real Knative Eventing v0\.50\.0: kube-apiserver v1\.37\.2 at https:\/\/10\.245\.0\.1:\d+/);
    expect(out).toContain("NeoSet's eventing-only variant (knative/eventing-only/)");
    expect(out).not.toContain('Knative Serving');
    expect(k(['get', 'namespaces', '-o', 'name'])).not.toContain('namespace/knative-serving');
    expect(JSON.parse(k(['get', 'deployments', '-n', 'neoset-system', '-o', 'json'])).items.map((d: { metadata: { name: string } }) => d.metadata.name)).toEqual(expect.arrayContaining(['neoset-reconcile', 'neoset-readiness', 'neoset-admission']));
  });

  it('drives examples/mysql.yaml through an in-place rollout, every event through the real Broker (no bridge)', async () => {
    const walk = Date.now();
    const { before, after } = await readmeWalkthrough(kubeconfig);
    console.log(`[dev eventing-only] README walkthrough (apply, 5 Ready, patch, rollout Completed) in ${((Date.now() - walk) / 1000).toFixed(1)} s`);
    expect(after.map((p) => p.spec.containers[0].image)).toEqual(Array(5).fill('mysql:8.1'));
    expect(Object.fromEntries(after.map((p) => [p.metadata.name, p.metadata.uid]))).toEqual(Object.fromEntries(before.map((p) => [p.metadata.name, p.metadata.uid])));
    // reconcile (a pod) says so itself, on its METRICS_PORT at the pod's IP; its event port, reached at
    // the Service's ClusterIP, names no NeoSet (SPEC §2.5).
    const reconcile = /reconcile (http:\/\/10\.\d+\.\d+\.\d+)/.exec(dev.output())![1];
    expect((await probe(`${reconcile}/metrics`))!.body).not.toContain('neoset="mysql"');
    expect(dev.output()).toMatch(/ readiness update pod default\/mysql-\d → default\/mysql ok: setInPlaceReady/);
  });

  it('kubectl neoset version finds the three functions (Deployments behind v1 Services here)', async () => {
    const r = await run('kubectl', ['neoset', 'version'], { env: { ...process.env, PATH: `${join(REPO_ROOT, 'bin')}:${process.env.PATH}`, KUBECONFIG: kubeconfig } });
    console.log(`[dev eventing-only] kubectl neoset version (exit ${r.code}):\n${r.stdout}${r.stderr}`);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const rows = r.stdout.split('\n').slice(2, 5).map((line) => line.split(/\s{3,}/));
    // Asked of the running pods, not read from the image tag (which says 0.3.0 too).
    expect(rows).toEqual(['reconcile', 'readiness', 'admission'].map((fn) => [fn, PACKAGE_VERSION, `/healthz through the API server's service proxy (service neoset-system/neoset-${fn})`]));
  });

  it('stops everything it started on Ctrl-C', async () => {
    const { code, ms, left } = await pressCtrlCOnKnative(dev);
    console.log(`[dev eventing-only] gone ${ms} ms after SIGINT, exit ${code}`);
    expect(left, dev.output()).toEqual({ netns: [], links: [], tables: [], processes: [] });
    expect(ms).toBeLessThanOrEqual(STOP_WITHIN_MS);
    expect(code).toBe(0);
  }, 30_000);
});
