// `kubectl neoset version`: its command line, and what it prints from each way of asking a function
// (a URL's /healthz, the service proxy, a Deployment's or a Knative Service's image tag), with a
// fake KubeClient for the API server's answers and a local http server for a function's own.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseInvocation } from '../../bin/neoset/args.ts';
import type { Cluster } from '../../bin/neoset/cluster.ts';
import type { Io } from '../../bin/neoset/commands/io.ts';
import { imageTag, privateServiceName, probeUrl, version } from '../../bin/neoset/commands/version.ts';
import { CliError } from '../../bin/neoset/errors.ts';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiError, createKubeClient, type KubeClient } from '../../shared/k8s/client.ts';
import { NEOSET_VERSION } from '../../shared/version.ts';

const parse = (line: string) => parseInvocation(line.split(' ').filter(Boolean));

function capture(): { io: Io; out: () => string; err: () => string } {
  const out = new PassThrough();
  const err = new PassThrough();
  const text = (s: PassThrough) => () => s.read()?.toString() ?? '';
  return { io: { out: out as unknown as NodeJS.WriteStream, err: err as unknown as NodeJS.WriteStream, now: Date.now, sleep: async () => {} }, out: text(out), err: text(err) };
}

/** A KubeClient answering GETs from `answers` by path (a function to throw), 404 otherwise. */
function fakeCluster(answers: Record<string, unknown | (() => never)>): () => Cluster {
  const client: KubeClient = {
    request: async (verb, path) => {
      const a = answers[path];
      if (typeof a === 'function') return (a as () => never)();
      if (a === undefined) throw new ApiError(verb, path, 404, 'NotFound', `the server could not find the requested resource`);
      return a as never;
    },
  };
  return () => ({ client, namespace: 'default' });
}

/** `kubectl neoset version` against `answers`: its exit code and the lines it printed. */
async function printed(answers: Record<string, unknown | (() => never)>, functionUrls: Partial<Record<'reconcile' | 'readiness' | 'admission', string>> = {}) {
  const c = capture();
  const code = await version(fakeCluster({ '/version': {}, ...answers }), { client: false, functionUrls }, c.io);
  return { code, lines: c.out().split('\n') };
}

const NS = '/namespaces/neoset-system';
const KSVC = (fn: string) => `/apis/serving.knative.dev/v1${NS}/services/neoset-${fn}`;
const REVISION = (name: string) => `/apis/serving.knative.dev/v1${NS}/revisions/${name}`;
const DEPLOYMENT = (fn: string) => `/apis/apps/v1${NS}/deployments/neoset-${fn}`;
/** The API server's service proxy to a Service's /healthz, `scheme:name:port`. */
const PROXY = (service: string) => `/api/v1${NS}/services/${service}/proxy/healthz`;
const template = (image: string) => ({ spec: { template: { spec: { containers: [{ name: 'x', image }] } } } });
const ksvc = (image: string, latestReadyRevisionName?: string) => ({ ...template(image), status: latestReadyRevisionName ? { latestReadyRevisionName } : {} });
const revision = (image: string, actualReplicas: number) => ({ spec: { containerConcurrency: 10, containers: [{ name: 'user-container', image }] }, status: { actualReplicas } });
/** 63 characters: the longest revision name, for which Knative hashes the private Service's name. */
const LONG_REVISION = `neoset-readiness-${'a'.repeat(40)}-00001`;
const FORBIDDEN = 'User "jane" cannot get this resource in the namespace "neoset-system"';
const forbidden = (path: string) => () => {
  throw new ApiError('GET', path, 403, 'Forbidden', FORBIDDEN);
};
/** What an API server without Knative Serving answers for its resources. */
const noServing = (path: string) => () => {
  throw new ApiError('GET', path, 404, 'Unknown', '404 page not found\n');
};

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    const answers: Record<string, () => void> = {
      '/ok/healthz': () => res.end(JSON.stringify({ status: 'ok', function: 'reconcile', version: '9.9.9' })),
      '/old/healthz': () => res.end(JSON.stringify({ status: 'ok', function: 'reconcile' })),
      '/other/healthz': () => res.end(JSON.stringify({ status: 'ok', function: 'readiness', version: '9.9.9' })),
      '/admission/healthz': () => res.end(JSON.stringify({ status: 'ok', function: 'admission', version: '0.3.0' })),
      '/text/healthz': () => res.end('ok'),
      '/huge/healthz': () => res.end(JSON.stringify({ status: 'x'.repeat(100_000) })),
    };
    (answers[req.url ?? ''] ?? (() => res.writeHead(404).end()))();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('kubectl neoset version: the command line', () => {
  it('parses --client and --function-url NAME=URL', () => {
    expect(parse('version')).toMatchObject({ kind: 'run', topic: 'version', command: { name: 'version', client: false, functionUrls: {} } });
    expect(parse('version --client')).toMatchObject({ command: { client: true } });
    expect(parse('version --client=false')).toMatchObject({ command: { client: false } });
    expect(parse('version --function-url reconcile=http://127.0.0.1:8081 --function-url=admission=https://127.0.0.1:8443/')).toMatchObject({
      command: { functionUrls: { reconcile: 'http://127.0.0.1:8081/', admission: 'https://127.0.0.1:8443/' } },
    });
    expect(parse('version --help')).toEqual({ kind: 'help', topic: 'version' });
  });

  it.each([
    ['version mysql', /takes no NeoSet name/],
    ['version --function-url frob=http://x', /NAME one of reconcile, readiness, admission/],
    ['version --function-url reconcile', /NAME=URL/],
    ['version --function-url reconcile=file:///etc/passwd', /must be http:\/\/ or https:\/\//],
    ['version --function-url reconcile=127.0.0.1:8081', /must be http/],
    ['version --function-url reconcile=http://a --function-url reconcile=http://b', /names reconcile twice/],
    ['version --client --function-url reconcile=http://a', /not with --function-url/],
    ['version --watch', /unknown flag --watch/],
  ])('%s is a usage error', (line, message) => {
    expect(() => parse(line)).toThrow(CliError);
    expect(() => parse(line)).toThrow(message);
  });
});

describe('kubectl neoset version: what it prints', () => {
  it('--client: the plugin version, no cluster', async () => {
    const c = capture();
    const code = await version(() => { throw new Error('no cluster expected'); }, { client: true, functionUrls: {} }, c.io);
    expect([code, c.out()]).toEqual([0, `Plugin version: ${NEOSET_VERSION}\n`]);
  });

  it('a function URL: its /healthz, bounded and parsed; anything else is unreachable with why', async () => {
    expect(await probeUrl('reconcile', `${base}/ok`)).toEqual({ function: 'reconcile', version: '9.9.9', from: `GET ${base}/ok/healthz` });
    expect(await probeUrl('reconcile', `${base}/old/`)).toMatchObject({ version: 'before 0.3.0' });
    expect(await probeUrl('reconcile', `${base}/other`)).toEqual({ function: 'reconcile', from: `GET ${base}/other/healthz: it answers as "readiness", not reconcile` });
    expect((await probeUrl('reconcile', `${base}/text`)).from).toMatch(/: the answer is not JSON$/);
    expect((await probeUrl('reconcile', `${base}/huge`)).from).toMatch(/: answer over 4096 bytes$/);
    expect((await probeUrl('reconcile', `${base}/none`)).from).toMatch(/: answered 404$/);
    expect((await probeUrl('reconcile', 'http://127.0.0.1:9')).from).toMatch(/ECONNREFUSED/);
  });

  it('the default npm run dev (knative/eventing-only/): no Knative Serving, each function a Deployment behind a v1 Service, asked through the service proxy', async () => {
    const { code, lines } = await printed({
      // No Knative Serving: the API server's plain-text answer, its newline kept off the table.
      [KSVC('reconcile')]: noServing(KSVC('reconcile')),
      [KSVC('readiness')]: noServing(KSVC('readiness')),
      [DEPLOYMENT('reconcile')]: template('ghcr.io/neoset/neoset:0.3.0'),
      [DEPLOYMENT('readiness')]: template('ghcr.io/neoset/neoset:0.3.0'),
      [DEPLOYMENT('admission')]: template('ghcr.io/neoset/neoset:0.3.0'),
      [PROXY('http:neoset-reconcile:80')]: { status: 'ok', function: 'reconcile', version: '0.3.1' },
      [PROXY('http:neoset-readiness:80')]: forbidden(PROXY('http:neoset-readiness:80')),
      [PROXY('https:neoset-admission:443')]: { status: 'ok', function: 'admission', version: '0.3.1' },
    });
    expect(code).toBe(0);
    expect(lines).toEqual([
      `Plugin version: ${NEOSET_VERSION}`,
      'FUNCTION    VERSION   FROM',
      "reconcile   0.3.1     /healthz through the API server's service proxy (service neoset-system/neoset-reconcile)",
      `readiness   0.3.0     image tag of deployment neoset-system/neoset-readiness (service proxy: Error from server (Forbidden): ${FORBIDDEN})`,
      "admission   0.3.1     /healthz through the API server's service proxy (service neoset-system/neoset-admission)",
      '',
    ]);
  });

  it('Knative Services: the latest ready revision asked through its private Service; one scaled to zero is not asked (not woken), its image tag given', async () => {
    const { code, lines } = await printed({
      [KSVC('reconcile')]: ksvc('registry:5000/neoset:0.4.0', 'neoset-reconcile-00002'),
      [REVISION('neoset-reconcile-00002')]: revision('registry:5000/neoset:0.3.2', 1),
      [PROXY('http:neoset-reconcile-00002-private:80')]: { status: 'ok', function: 'reconcile', version: '0.3.2' },
      [KSVC('readiness')]: ksvc('registry:5000/neoset:0.3.2', 'neoset-readiness-00001'),
      [REVISION('neoset-readiness-00001')]: revision('registry:5000/neoset:0.3.2', 0),
      // Were it asked, it would say so: a revision at zero is not, whatever its private Service would answer.
      [PROXY('http:neoset-readiness-00001-private:80')]: { status: 'ok', function: 'readiness', version: '9.9.9' },
      [PROXY('https:neoset-admission:443')]: { status: 'ok', function: 'admission', version: '0.3.2' },
    });
    expect(code).toBe(0);
    expect(lines).toEqual([
      `Plugin version: ${NEOSET_VERSION}`,
      'FUNCTION    VERSION   FROM',
      "reconcile   0.3.2     /healthz of revision neoset-reconcile-00002 of ksvc neoset-system/neoset-reconcile through the API server's service proxy (service neoset-system/neoset-reconcile-00002-private)",
      'readiness   0.3.2     scaled to zero, not woken: image tag of revision neoset-readiness-00001 of ksvc neoset-system/neoset-readiness',
      "admission   0.3.2     /healthz through the API server's service proxy (service neoset-system/neoset-admission)",
      '',
    ]);
  });

  it('Knative Services the user may read but not proxy to, or whose revision cannot be read: the image tag, and why', async () => {
    const { lines } = await printed(
      {
        [KSVC('reconcile')]: ksvc('registry:5000/neoset:0.3.0', 'neoset-reconcile-00002'),
        [REVISION('neoset-reconcile-00002')]: revision('registry:5000/neoset:0.3.0', 2),
        [PROXY('http:neoset-reconcile-00002-private:80')]: forbidden(PROXY('http:neoset-reconcile-00002-private:80')),
        // A revision whose name is too long for a Service of its own plus "-private": Knative's hashed name.
        [KSVC('readiness')]: ksvc('registry:5000/neoset:0.3.1', LONG_REVISION),
        [REVISION(LONG_REVISION)]: () => {
          throw new ApiError('GET', REVISION(LONG_REVISION), 403, 'Forbidden', 'revisions.serving.knative.dev is forbidden');
        },
        [PROXY(`http:${privateServiceName(LONG_REVISION)}:80`)]: () => {
          throw new ApiError('GET', '', 503, 'ServiceUnavailable', `no endpoints available for service "${privateServiceName(LONG_REVISION)}"`);
        },
      },
      { admission: `${base}/admission` },
    );
    const rows = lines.slice(2, 4);
    expect(rows[0]).toBe(`reconcile   0.3.0     image tag of revision neoset-reconcile-00002 of ksvc neoset-system/neoset-reconcile (service proxy: Error from server (Forbidden): ${FORBIDDEN})`);
    expect(rows[1]).toBe(
      `readiness   0.3.1     image tag of ksvc neoset-system/neoset-readiness (revision ${LONG_REVISION}: Error from server (Forbidden): revisions.serving.knative.dev is forbidden; ` +
        `service proxy: Error from server (ServiceUnavailable): no endpoints available for service "${privateServiceName(LONG_REVISION)}")`,
    );
  });

  it('a Knative Service with no ready revision: its template\'s tag; a function installed nowhere: said so, with what to pass', async () => {
    const rows = (await printed({ [KSVC('reconcile')]: ksvc('registry:5000/neoset:0.3.0') }, { admission: `${base}/admission` })).lines.slice(2, 4);
    expect(rows[0]).toBe('reconcile   0.3.0         image tag of ksvc neoset-system/neoset-reconcile (no ready revision)');
    expect(rows[1]).toBe('readiness   unreachable   no ksvc or deployment neoset-system/neoset-readiness (not installed, or run elsewhere, as by npm run dev -- --bridge: pass --function-url)');
  });

  it('admission: its Deployment\'s image tag when the proxy is refused; both refused, both reasons', async () => {
    const urls = { reconcile: `${base}/ok`, readiness: `${base}/other` };
    const refused = { [PROXY('https:neoset-admission:443')]: forbidden(PROXY('https:neoset-admission:443')) };
    const tagged = await printed({ ...refused, [DEPLOYMENT('admission')]: template('ghcr.io/neoset/neoset:0.3.0@sha256:' + '0'.repeat(64)) }, urls);
    expect(tagged.lines).toContain(`admission   0.3.0     image tag of deployment neoset-system/neoset-admission (service proxy: Error from server (Forbidden): ${FORBIDDEN})`);
    const none = await printed({ ...refused, [DEPLOYMENT('admission')]: forbidden(DEPLOYMENT('admission')) }, urls);
    expect(none.lines).toContain(`admission   unreachable   deployment neoset-system/neoset-admission: Error from server (Forbidden): ${FORBIDDEN}; service proxy: Error from server (Forbidden): ${FORBIDDEN}`);
  });

  it('every function by URL needs no cluster; an API server that cannot be reached is exit 3', async () => {
    const none = capture();
    const urls = { reconcile: `${base}/ok`, readiness: `${base}/ok`, admission: `${base}/ok` };
    expect(await version(() => { throw new Error('no cluster expected'); }, { client: false, functionUrls: urls }, none.io)).toBe(0);
    const down = capture();
    const unreachable = () => {
      throw new ApiError('GET', '/version', 0, 'ConnectionFailed', 'connect ECONNREFUSED 127.0.0.1:6443');
    };
    expect(await version(fakeCluster({ '/version': unreachable }), { client: false, functionUrls: {} }, down.io)).toBe(3);
    expect(down.out()).toBe(`Plugin version: ${NEOSET_VERSION}\n`);
    expect(down.err()).toBe('error: cannot reach the API server: connect ECONNREFUSED 127.0.0.1:6443\n');
  });

  it("names a revision's private Service as Knative does (kmeta.ChildName; serving's names_test.go)", () => {
    expect(privateServiceName('foo')).toBe('foo-private');
    expect(privateServiceName('f'.repeat(55))).toBe(`${'f'.repeat(55)}-private`);
    expect(privateServiceName('f'.repeat(63))).toBe('fffffffffffffffffffffff105d7597f637e83cc711605ac3ea4957-private');
  });

  it('bounds a proxied /healthz and prints no control character a cluster or a function sent (a real client, a local API server)', async () => {
    const routes: Record<string, unknown> = {
      '/version': {},
      [PROXY('http:neoset-reconcile:80')]: { status: 'x'.repeat(100_000) },
      [DEPLOYMENT('reconcile')]: template('ghcr.io/neoset/neoset:0.3.0'),
      [DEPLOYMENT('readiness')]: template('ghcr.io/neoset/neoset:0.3.0\u001b[2J'),
      [PROXY('https:neoset-admission:443')]: { status: 'ok', function: 'admission', version: '0.3.0\u001b[31m' },
    };
    const api = createServer((req, res) => {
      const answer = routes[req.url ?? ''];
      if (answer === undefined) return res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ kind: 'Status', reason: 'NotFound', message: `${req.url} not found` }));
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    try {
      const kc = new KubeConfig();
      kc.loadFromOptions({ clusters: [{ name: 'c', server: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'c', cluster: 'c', user: 'u' }], currentContext: 'c' });
      const c = capture();
      expect([await version(() => ({ client: createKubeClient(kc), namespace: 'default' }), { client: false, functionUrls: {} }, c.io), c.err()]).toEqual([0, '']);
      const rows = c.out().split('\n').slice(2, 5);
      expect(rows[0]).toBe('reconcile   0.3.0         image tag of deployment neoset-system/neoset-reconcile (service proxy: answer over 4096 bytes)');
      expect(rows[1]).toMatch(/^readiness   0\.3\.0\?\[2J     image tag of deployment neoset-system\/neoset-readiness \(service proxy: Error from server \(NotFound\): /);
      expect(rows[2]).toBe("admission   unreachable   /healthz through the API server's service proxy (service neoset-system/neoset-admission): the answer is not a NeoSet function's /healthz");
    } finally {
      await new Promise<void>((resolve) => api.close(() => resolve()));
    }
  });

  it('reads an image reference\'s tag', () => {
    expect(imageTag('ghcr.io/neoset/neoset:0.3.0')).toBe('0.3.0');
    expect(imageTag('localhost:5000/neoset:0.3.0@sha256:abc')).toBe('0.3.0');
    expect(imageTag('localhost:5000/neoset@sha256:abc')).toBe('untagged');
    expect(imageTag('neoset')).toBe('untagged');
  });
});
