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
import { imageTag, probeUrl, version } from '../../bin/neoset/commands/version.ts';
import { CliError } from '../../bin/neoset/errors.ts';
import { ApiError, type KubeClient } from '../../shared/k8s/client.ts';
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

const SYSTEM = '/apis/serving.knative.dev/v1/namespaces/neoset-system/services';
const PROXY = '/api/v1/namespaces/neoset-system/services/https:neoset-admission:443/proxy/healthz';
const DEPLOYMENT = '/apis/apps/v1/namespaces/neoset-system/deployments/neoset-admission';
const template = (image: string) => ({ spec: { template: { spec: { containers: [{ name: 'x', image }] } } } });

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    const answers: Record<string, () => void> = {
      '/ok/healthz': () => res.end(JSON.stringify({ status: 'ok', function: 'reconcile', version: '9.9.9' })),
      '/old/healthz': () => res.end(JSON.stringify({ status: 'ok', function: 'reconcile' })),
      '/other/healthz': () => res.end(JSON.stringify({ status: 'ok', function: 'readiness', version: '9.9.9' })),
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

  it('in the cluster: admission through the service proxy, else its Deployment; the Knative Services by image tag; unreachable ones said, exit 0', async () => {
    const c = capture();
    const forbidden = () => {
      throw new ApiError('GET', PROXY, 403, 'Forbidden', 'services "https:neoset-admission:443" is forbidden: User "jane" cannot get resource "services/proxy"');
    };
    const code = await version(
      fakeCluster({
        '/version': { gitVersion: 'v1.37.2' },
        [PROXY]: forbidden,
        [DEPLOYMENT]: template('ghcr.io/neoset/neoset:0.3.0@sha256:' + '0'.repeat(64)),
        [`${SYSTEM}/neoset-reconcile`]: { ...template('registry:5000/neoset:0.3.0'), status: { latestReadyRevisionName: 'neoset-reconcile-00002' } },
        // No Knative Serving: the API server's plain-text answer, its newline kept off the table.
        [`${SYSTEM}/neoset-readiness`]: () => {
          throw new ApiError('GET', `${SYSTEM}/neoset-readiness`, 404, 'Unknown', '404 page not found\n');
        },
      }),
      { client: false, functionUrls: {} },
      c.io,
    );
    expect(code).toBe(0);
    expect(c.out().split('\n')).toEqual([
      `Plugin version: ${NEOSET_VERSION}`,
      'FUNCTION    VERSION       FROM',
      'reconcile   0.3.0         image tag of ksvc neoset-system/neoset-reconcile (latest ready revision neoset-reconcile-00002)',
      'readiness   unreachable   ksvc neoset-system/neoset-readiness: Error from server (Unknown): 404 page not found (not installed from knative/? on the dev stack, pass --function-url)',
      'admission   0.3.0         image tag of deployment neoset-system/neoset-admission (service proxy: Error from server (Forbidden): services "https:neoset-admission:443" is forbidden: User "jane" cannot get resource "services/proxy")',
      '',
    ]);
  });

  it("admission's /healthz through the proxy when allowed; an answer that is no NeoSet /healthz is not taken", async () => {
    const c = capture();
    await version(fakeCluster({ '/version': {}, [PROXY]: { status: 'ok', function: 'admission', version: '0.3.0' } }), { client: false, functionUrls: { reconcile: `${base}/ok`, readiness: `${base}/ok` } }, c.io);
    const out = c.out();
    expect(out).toMatch(/\nadmission +0\.3\.0 +\/healthz through the API server's service proxy \(service neoset-system\/neoset-admission\)\n/);
    expect(out).toMatch(/\nreadiness +unreachable +GET .*: it answers as "reconcile", not readiness\n/);
    const bad = capture();
    await version(fakeCluster({ '/version': {}, [PROXY]: { version: 7 } }), { client: false, functionUrls: { reconcile: `${base}/ok`, readiness: `${base}/ok` } }, bad.io);
    expect(bad.out()).toMatch(/\nadmission +unreachable +\/healthz through the API server's service proxy .*: the answer is not a NeoSet function's \/healthz\n/);
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

  it('reads an image reference\'s tag', () => {
    expect(imageTag('ghcr.io/neoset/neoset:0.3.0')).toBe('0.3.0');
    expect(imageTag('localhost:5000/neoset:0.3.0@sha256:abc')).toBe('0.3.0');
    expect(imageTag('localhost:5000/neoset@sha256:abc')).toBe('untagged');
    expect(imageTag('neoset')).toBe('untagged');
  });
});
