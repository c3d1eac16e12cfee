// `npm test`'s first step after the type-check: make sure what the integration tests run is here,
// before vitest starts (so a first build is not raced by any test timeout):
//   - openssl (certificates) — installed with apt-get when missing and we are root;
//   - kubectl (the tests drive the cluster with it, as users do) — said clearly when missing;
//   - etcd, kube-apiserver, kube-controller-manager: envtest's variables, else the cached build,
//     else a build from the Go module proxy (several minutes, once per machine).
import { spawnSync } from 'node:child_process';
import { resolveBinaries } from './binaries.ts';

const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;

if (!has('openssl')) {
  if (process.getuid?.() !== 0) {
    console.error('error: openssl is needed for the test certificates: install it (Debian: apt-get install openssl)');
    process.exit(2);
  }
  console.error('openssl is missing: apt-get install -y openssl');
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'openssl']]) {
    const r = spawnSync('apt-get', args, { stdio: 'inherit' });
    if (r.status !== 0) process.exit(2);
  }
}
if (!has('kubectl')) {
  console.error('error: kubectl is needed on PATH (the integration tests and the plugin use it as users do)');
  process.exit(2);
}

const started = Date.now();
const binaries = await resolveBinaries();
console.log(`control-plane binaries ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${Object.values(binaries).join(', ')}`);
