// Process-mode pods run as root on the host: an image that runs its own program only (the stack's:
// NeoSet's, Knative's, CoreDNS's; image-table.ts fixedCommand) refuses what would make it run
// another — a pod's command, an exec probe or hook, a workingDir of its own, a variable that makes
// the program load code or files of the pod's choosing, a $(VAR) of its entrypoint that names a path.
import { readFileSync } from 'node:fs';
import type { V1Container } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { commandLine, ContainerConfigError } from '../../dev/kubelet/process/environment.ts';
import { CHECKOUT, createImageTable, node24 } from '../../dev/kubelet/process/image-table.ts';

const neoset = createImageTable([], {}).lookup('ghcr.io/neoset/neoset:0.1.0')!;
const run = (container: Parameters<typeof commandLine>[0], env: Record<string, string> = { NEOSET_FUNCTION: 'reconcile' }) => () => commandLine(container, neoset, env, 'h');

describe('process mode on the host', () => {
  it("runs NeoSet's image as its function, args passed on", () => {
    expect(run({ name: 'c', image: 'ghcr.io/neoset/neoset:0.1.0', args: ['--x'] })().argv).toEqual([node24(), '--enable-source-maps', 'functions/reconcile/server.ts', '--x']);
  });

  it("refuses a pod's command for NeoSet's image (it would run as root on the host)", () => {
    expect(run({ name: 'c', image: 'ghcr.io/neoset/neoset:0.1.0', command: ['sh', '-c', 'id > /tmp/owned'] })).toThrow(ContainerConfigError);
    expect(run({ name: 'c', image: 'ghcr.io/neoset/neoset:0.1.0', command: ['sh'] })).toThrow(/a command is not run: this image runs its own program only/);
  });

  it('refuses what makes its program load other code', () => {
    expect(run({ name: 'c', env: [{ name: 'NODE_OPTIONS', value: '--import=/tmp/x.mjs' }] }, { NEOSET_FUNCTION: 'reconcile', NODE_OPTIONS: '--import=/tmp/x.mjs' })).toThrow(/NODE_OPTIONS is not honoured/);
    expect(run({ name: 'c' }, { NEOSET_FUNCTION: 'reconcile', LD_PRELOAD: '/tmp/x.so' })).toThrow(/LD_PRELOAD/);
    expect(run({ name: 'c' }, { NEOSET_FUNCTION: '../../../run/neoset/neoset2/pods/u/volumes/v' })).toThrow(/NEOSET_FUNCTION=.* is not a name/);
  });

  it('refuses exec probes and exec lifecycle hooks (a command run as root in its namespaces); other handlers run', () => {
    const exec = { exec: { command: ['sh', '-c', 'id > /tmp/owned'] } };
    for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe'] as const) {
      expect(run({ name: 'c', [probe]: { ...exec, periodSeconds: 1 } }), probe).toThrow(`an exec ${probe} is not run: this image runs its own program only`);
    }
    for (const hook of ['postStart', 'preStop'] as const) {
      expect(run({ name: 'c', lifecycle: { [hook]: exec } }), hook).toThrow(`an exec ${hook} hook is not run`);
    }
    // What the stack's own manifests use (httpGet, tcpSocket; Serving's preStop httpGet /wait-for-drain, sleep).
    const c: V1Container = {
      name: 'c',
      readinessProbe: { httpGet: { path: '/healthz', port: 8080 } },
      livenessProbe: { tcpSocket: { port: 8080 } },
      startupProbe: { httpGet: { path: '/healthz', port: 8080 } },
      lifecycle: { preStop: { httpGet: { path: '/wait-for-drain', port: 8022 } }, postStart: { sleep: { seconds: 1 } } },
    };
    expect(run(c)().argv[2]).toBe('functions/reconcile/server.ts');
  });

  it("refuses any args for Knative's images (--kubeconfig would name this host's admin kubeconfig), Traefik's and CoreDNS's (-conf, -pidfile); NeoSet's take them", async () => {
    const { knativeImageTable, knativeImage } = await import('../../dev/cluster/knative.ts');
    const table = createImageTable(knativeImageTable('/opt/eventing'), {}, { 'knative-serving-controller': '/opt/serving/controller', traefik: '/opt/traefik', coredns: '/opt/coredns' });
    const kubeconfig = ['--kubeconfig=/root/.kube/config'];
    for (const image of [knativeImage('controller'), knativeImage('apiserver_receive_adapter'), knativeImage('broker/filter'), 'neoset.local/knative-serving/controller:v0.50.0', 'neoset.local/traefik:v3.7.13', 'registry.k8s.io/coredns/coredns:v1.15.0']) {
      const entry = table.lookup(image)!;
      expect(entry, image).toBeDefined();
      expect(() => commandLine({ name: 'c', image, args: kubeconfig }, entry, {}, 'h'), image).toThrow(/args are not passed/);
      expect(commandLine({ name: 'c', image }, entry, {}, 'h').argv.length, image).toBeGreaterThan(0);
    }
    // CoreDNS runs the checkout's Corefile, for the cluster's domain, whatever the pod mounts.
    const { COREFILE_PATH } = await import('../../dev/cluster/coredns.ts');
    const { CLUSTER_DOMAIN } = await import('../../dev/cluster/service-network.ts');
    expect(commandLine({ name: 'c', image: 'registry.k8s.io/coredns/coredns:v1.15.0' }, table.lookup('registry.k8s.io/coredns/coredns:v1.15.0')!, {}, 'h').argv).toEqual(['/opt/coredns', '-conf', COREFILE_PATH]);
    expect(readFileSync(COREFILE_PATH, 'utf8')).toContain(`kubernetes ${CLUSTER_DOMAIN} in-addr.arpa`);
  }, 30_000);

  it("refuses a workingDir other than the image's: the entrypoint's relative server.ts would load from there", () => {
    expect(run({ name: 'c', workingDir: '/run/neoset/neoset2/pods/u/volumes/kit' })).toThrow(`workingDir /run/neoset/neoset2/pods/u/volumes/kit is not the image's (${CHECKOUT})`);
    expect(run({ name: 'c', workingDir: 'functions' })).toThrow(/workingDir functions is not the image's/);
    expect(run({ name: 'c', workingDir: `${CHECKOUT}/` })().workingDir).toBe(`${CHECKOUT}/`);
    expect(run({ name: 'c', workingDir: CHECKOUT })().workingDir).toBe(CHECKOUT);
    // An image without a working directory of its own runs in /.
    const coredns = createImageTable([], {}, { coredns: '/opt/coredns' }).lookup('registry.k8s.io/coredns/coredns:v1.12.0')!;
    expect(() => commandLine({ name: 'c', workingDir: '/tmp' }, coredns, {}, 'h')).toThrow("workingDir /tmp is not the image's (/)");
    expect(commandLine({ name: 'c', workingDir: '/' }, coredns, {}, 'h').workingDir).toBe('/');
  });

  it('refuses each variable that makes the program load, read or write what the pod names, with why', () => {
    const refused: Record<string, RegExp> = {
      NODE_OPTIONS: /NODE_OPTIONS is not honoured \(Node takes options from it/,
      NODE_PATH: /NODE_PATH is not honoured \(Node looks for modules/,
      HOME: /HOME is not honoured \(Node loads modules from \$HOME\/.node_modules .* \$HOME\/.kube\/config\)/,
      KUBECONFIG: /KUBECONFIG is not honoured \(.*exec credential plugin/,
      OPENSSL_CONF: /OPENSSL_CONF is not honoured \(OpenSSL reads that file, which can load engines and providers/,
      NODE_EXTRA_CA_CERTS: /NODE_EXTRA_CA_CERTS is not honoured/,
      NODE_COMPILE_CACHE: /NODE_COMPILE_CACHE/,
      NODE_V8_COVERAGE: /NODE_V8_COVERAGE/,
      NODE_REDIRECT_WARNINGS: /NODE_REDIRECT_WARNINGS/,
      SSL_CERT_FILE: /SSL_CERT_FILE/,
      LD_PRELOAD: /LD_PRELOAD is not honoured \(glibc ignores it for privileged programs/,
      LD_LIBRARY_PATH: /LD_LIBRARY_PATH/,
      LD_AUDIT: /LD_AUDIT/,
      GCONV_PATH: /GCONV_PATH/,
      LOCPATH: /LOCPATH/,
      GLIBC_TUNABLES: /GLIBC_TUNABLES/,
    };
    for (const [name, why] of Object.entries(refused)) {
      // As the pod's env gives it, and as envFrom or anything else merged into the spec's env does.
      expect(run({ name: 'c', env: [{ name, value: '/run/neoset/x' }] }, { NEOSET_FUNCTION: 'reconcile', [name]: '/run/neoset/x' }), name).toThrow(why);
      expect(run({ name: 'c' }, { NEOSET_FUNCTION: 'reconcile', [name]: '/run/neoset/x' }), name).toThrow(ContainerConfigError);
    }
  });

  it('lets through the same value as the default, and what is the program\'s own (PATH, TZ, NODE_ENV, proxies)', () => {
    const env = { NEOSET_FUNCTION: 'reconcile', HOME: '/root', NODE_ENV: 'development', PATH: '/run/neoset/x:/usr/bin', TZ: 'Europe/Paris', HTTPS_PROXY: 'http://p:3128', LANG: 'C.UTF-8' };
    const line = run({ name: 'c' }, env)();
    expect(line.env).toMatchObject(env);
    // Service variables never collide with the list: a Service `node` or `ld` gives NODE_PORT, LD_SERVICE_HOST….
    expect(run({ name: 'c' }, { NEOSET_FUNCTION: 'reconcile', NODE_SERVICE_HOST: '10.96.0.7', NODE_PORT: 'tcp://10.96.0.7:80', LD_SERVICE_HOST: '10.96.0.8' })().argv).toHaveLength(3);
  });

  it("still runs a user's own image table entry with the pod's command", () => {
    const own = createImageTable([{ image: 'neoset.local/tool:*', entrypoint: ['/bin/tool'] }], {}).lookup('neoset.local/tool:1')!;
    expect(commandLine({ name: 'c', command: ['/bin/other'] }, own, {}, 'h').argv).toEqual(['/bin/other']);
    // Its pods' exec probes, workingDir and environment are theirs too: they run their own code anyway.
    const c: V1Container = { name: 'c', workingDir: '/srv', readinessProbe: { exec: { command: ['true'] } }, lifecycle: { preStop: { exec: { command: ['true'] } } } };
    expect(commandLine(c, own, { HOME: '/srv', LD_LIBRARY_PATH: '/srv/lib' }, 'h')).toMatchObject({ workingDir: '/srv', env: { HOME: '/srv', LD_LIBRARY_PATH: '/srv/lib' } });
  });
});
