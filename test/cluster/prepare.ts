// `npm test`'s first step after the type-check: make sure what the integration tests run is here,
// before vitest starts (so a first build is not raced by any test timeout):
//   - openssl (certificates), chromium (the dashboard's browser tests) and prometheus (a real
//     Prometheus scraping the functions, and promtool for the alert rules: test/cluster/prometheus.ts)
//     — installed with apt-get when missing and we are root;
//   - kubectl (the tests drive the cluster with it, as users do) — said clearly when missing;
//   - faketime (libfaketime: test/integration/one-clock.test.ts runs a reconcile instance with its
//     wall clock 60 s ahead), installed like the above;
//   - iproute2 and util-linux (ip netns, veth, nsenter: the process-mode kubelet's pods), installed like the above;
//   - etcd, kube-apiserver, kube-controller-manager: envtest's variables, else the cached build,
//     else a build from the Go module proxy (several minutes, once per machine);
//   - the CNI plugins bridge, host-local, loopback: NEOSET_CNI_PATH, else the cached build, else a
//     build from the Go module proxy (build-cni.sh, under a minute cold);
//   - iptables (test/integration/dev-host.test.ts makes a host kube-proxy's chains), installed like the above;
//   - nftables (the `nft` tool kube-proxy's nftables mode drives), installed like the above, and the
//     services stack's kube-proxy (TEST_ASSET_KUBE_PROXY, else built beside the control plane) and
//     CoreDNS (NEOSET_COREDNS, else build-coredns.sh, about 2 minutes cold);
//   - Knative Eventing's components and release manifests (NEOSET_KNATIVE_EVENTING, else
//     build-knative.sh, about 2 minutes cold), for test/integration/knative-eventing.test.ts;
//   - Knative Serving's components and config/core (NEOSET_KNATIVE_SERVING, else build-serving.sh),
//     Traefik (NEOSET_TRAEFIK, else build-traefik.sh) and kn (NEOSET_KN, else build-kn.sh), for the
//     e2e suites on the Serving layout (dev.test, knative-e2e, notifications, knative-serving). The
//     three start first and build side by side with the others (each build under its own lock,
//     build-lib.sh): their module downloads overlap the other builds' compiling. Cold, by their
//     headers' figures, about 17 min of CPU for Traefik, 5.5 for kn and Serving's share of
//     Eventing's packages on top — the longest part of a first `npm test` (README "How it is tested").
import { spawnSync } from 'node:child_process';
import { chromiumPath } from '../browser/chromium.ts';
import { resolveBinaries, resolveCniPlugins, resolveCoreDns, resolveKn, resolveKnativeEventing, resolveKnativeServing, resolveKubeProxy, resolveTraefik } from '../../dev/cluster/binaries.ts';

const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;

/** Installs a Debian package with apt-get when we are root (CI's machine), else says what is missing. */
function install(pkg: string, why: string): void {
  if (process.getuid?.() !== 0) {
    console.error(`error: ${pkg} is needed ${why}: install it (Debian: apt-get install ${pkg})`);
    process.exit(2);
  }
  console.error(`${pkg} is missing: apt-get install -y ${pkg}`);
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', pkg]]) {
    const r = spawnSync('apt-get', args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (r.status !== 0) process.exit(2);
  }
}

// `--only control-plane`: the packages and the control plane, all the unit and integration lane needs
// (npm test runs this, then starts that lane at once); `--only services`: the services stack's builds,
// which npm test's runner (test/run.ts) runs beside that lane, at nice 19, before the services lane
// starts — a first run's Go builds overlap the first lane's tests instead of coming before them.
// Without --only: everything (test:integration, a developer's first run).
// `--only services-eventing` and `--only serving` split the services builds in two (CNI, kube-proxy,
// CoreDNS and Eventing; Serving, Traefik and kn), which npm test's runner starts side by side so that
// the tests on Eventing alone need not wait for Traefik's build, the longest.
const ONLY = ['control-plane', 'services', 'services-eventing', 'serving'];
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
if (only !== undefined && !ONLY.includes(only)) {
  console.error(`error: --only takes ${ONLY.join(', ')}, not ${JSON.stringify(only)}`);
  process.exit(2);
}
const eventingPart = only === undefined || only === 'services' || only === 'services-eventing';
const servingPart = only === undefined || only === 'services' || only === 'serving';

if (only === undefined || only === 'control-plane') {
  if (!has('openssl')) install('openssl', 'for the test certificates');
  if (!chromiumPath()) install('chromium', 'for the dashboard browser tests (or set CHROMIUM_PATH)');
  if (!has('prometheus') || !has('promtool')) install('prometheus', 'for the metrics and alert-rule tests (prometheus, promtool)');
  if (!has('faketime')) install('faketime', "for the one-clock test (libfaketime: a function process with a skewed wall clock)");
  if (!has('ip')) install('iproute2', 'for the process-mode kubelet (ip netns, veth)');
  if (!has('nsenter') || !has('unshare')) install('util-linux', 'for the process-mode kubelet (nsenter, unshare)');
  if (!has('nft')) install('nftables', "for the services stack's kube-proxy (nftables mode)");
  if (!has('iptables')) install('iptables', "for the dev-host test: a host kube-proxy's iptables chains, which the dev stack's must leave alone");
  if (!has('kubectl')) {
    console.error('error: kubectl is needed on PATH (the integration tests and the plugin use it as users do)');
    process.exit(2);
  }
}

const started = Date.now();
if (only === undefined || only === 'control-plane') {
  const binaries = await resolveBinaries();
  console.log(`control-plane binaries ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${Object.values(binaries).join(', ')}`);
}
if (eventingPart || servingPart) {
  // Started first, awaited last (a failure is reported there, not as an unhandled rejection meanwhile).
  const timed = async (what: string, resolving: Promise<string>) => `${what} ${await resolving} (${((Date.now() - started) / 1000).toFixed(1)} s)`;
  const servingBuilds = servingPart ? Promise.allSettled([timed('Knative Serving', resolveKnativeServing()), timed('Traefik', resolveTraefik()), timed('kn', resolveKn())]) : null;
  if (eventingPart) {
    const cniStarted = Date.now();
    const cni = await resolveCniPlugins();
    console.log(`CNI plugins ready in ${((Date.now() - cniStarted) / 1000).toFixed(1)} s: ${cni}`);
    const servicesStarted = Date.now();
    const [kubeProxy, coredns] = [await resolveKubeProxy(), await resolveCoreDns()];
    console.log(`kube-proxy and CoreDNS ready in ${((Date.now() - servicesStarted) / 1000).toFixed(1)} s: ${kubeProxy}, ${coredns}`);
    const knativeStarted = Date.now();
    const knative = await resolveKnativeEventing();
    console.log(`Knative Eventing ready in ${((Date.now() - knativeStarted) / 1000).toFixed(1)} s: ${knative}`);
  }
  if (servingBuilds) {
    const serving = await servingBuilds;
    const failed = serving.filter((r) => r.status === 'rejected');
    if (failed.length > 0) {
      console.error(`error: ${failed.map((r) => String((r as PromiseRejectedResult).reason)).join('; ')}`);
      process.exit(2);
    }
    console.log(`Knative Serving, Traefik and kn ready in ${((Date.now() - started) / 1000).toFixed(1)} s from the start of this step: ${serving.map((r) => (r as PromiseFulfilledResult<string>).value).join(', ')}`);
  }
}
