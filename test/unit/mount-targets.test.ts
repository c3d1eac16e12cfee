// Where a process-mode container may mount a volume (dev/kubelet/process/mount-targets.ts): never
// over, inside or above what it runs — the checkout, its program, Node, the system's programs and
// libraries and what picks the code they load — symlinks resolved in the container's view, its
// earlier mounts included. Elsewhere (/etc/config, /var/run/secrets/…) as before.
import { lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { V1Container, V1VolumeMount } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { commandLine } from '../../dev/kubelet/process/environment.ts';
import { CHECKOUT, createImageTable, type ImageEntry } from '../../dev/kubelet/process/image-table.ts';
import { SYSTEM_PATHS } from '../../dev/kubelet/process/mount-targets.ts';
import { mountsOf } from '../../dev/kubelet/process/volumes.ts';

const dir = mkdtempSync(join(tmpdir(), 'neoset-mount-targets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Volumes as writeVolumes leaves them: `cfg` a ConfigMap's files, `host` a hostPath of the stack's
// directory holding symlinks out of it.
const cfg = join(dir, 'volumes', 'cfg');
mkdirSync(cfg, { recursive: true });
writeFileSync(join(cfg, 'server.ts'), 'not the function');
const host = join(dir, 'host');
mkdirSync(host);
symlinkSync(CHECKOUT, join(host, 'checkout'));
symlinkSync('../..', join(host, 'up')); // relative: leaves wherever the volume is mounted
symlinkSync('/etc', join(host, 'etc'));
const volumes = new Map([
  ['cfg', cfg],
  ['host', host],
]);

// A program of the user's image table entry, reached through a symlink.
mkdirSync(join(dir, 'bin'));
mkdirSync(join(dir, 'real'));
writeFileSync(join(dir, 'real', 'tool'), '');
symlinkSync(join(dir, 'real', 'tool'), join(dir, 'bin', 'tool'));

const table = createImageTable([{ image: 'neoset.local/tool:*', entrypoint: [join(dir, 'bin', 'tool'), `--config=${join(dir, 'conf', 'tool.yaml')}`] }], {}, { traefik: join(dir, 'real', 'tool') });
const NEOSET = 'ghcr.io/neoset/neoset:0.1.0';

async function mounts(volumeMounts: V1VolumeMount[], container: Partial<V1Container> = {}, env: Record<string, string> = {}) {
  const c: V1Container = { name: 'c', image: NEOSET, volumeMounts, ...container };
  const image: ImageEntry = table.lookup(c.image!)!;
  return mountsOf(c, volumes, image, commandLine(c, image, { NEOSET_FUNCTION: 'reconcile', ...env }, 'h'));
}
const at = (mountPath: string, more: Partial<V1VolumeMount> = {}) => mounts([{ name: 'cfg', mountPath, ...more }]);

describe('process-mode mount targets', () => {
  it('mounts where a pod usually does, as before', async () => {
    for (const path of ['/etc/config', '/etc/neoset/tls', '/etc/coredns', '/etc/hosts', '/var/run/secrets/kubernetes.io/serviceaccount', '/mnt/neoset-host', '/tmp/a/b']) {
      const [m] = await at(path);
      // Symlinks resolved: /var/run is /run on most hosts.
      expect(m.target, path).toBe(path.startsWith('/var/run/') && lstatSync('/var/run').isSymbolicLink() ? path.replace('/var/run/', '/run/') : path);
      expect(m.source).toBe(cfg);
    }
    expect(await at('/etc/config/server.ts', { subPath: 'server.ts', readOnly: true })).toEqual([{ source: join(cfg, 'server.ts'), target: '/etc/config/server.ts', readOnly: true }]);
  });

  it("refuses a mount over, inside or above the checkout: NeoSet's function would be the pod's code", async () => {
    await expect(at(join(CHECKOUT, 'functions/reconcile/server.ts'), { subPath: 'server.ts' })).rejects.toThrow(
      `mountPath ${CHECKOUT}/functions/reconcile/server.ts is a file the image's command line names ${CHECKOUT}/functions/reconcile/server.ts: process-mode containers run as root on this host`,
    );
    await expect(at(join(CHECKOUT, 'shared'))).rejects.toThrow(`lies inside the checkout ${CHECKOUT}`);
    await expect(at(CHECKOUT)).rejects.toThrow(`is the checkout ${CHECKOUT}`);
    await expect(at(dirname(CHECKOUT))).rejects.toThrow(`contains the checkout ${CHECKOUT}`);
    await expect(at('/')).rejects.toThrow(/mountPath \/ contains the checkout/);
    // Node's resolution walks up from the checkout: ws's optional require('bufferutil') is looked for there.
    await expect(at(join(dirname(CHECKOUT), 'node_modules/bufferutil'))).rejects.toThrow('lies inside a node_modules directory above the checkout');
    await expect(at('/node_modules')).rejects.toThrow('is a node_modules directory above the checkout');
  });

  it("refuses the system's programs, libraries, loader and what chooses the code they load", async () => {
    for (const [path, what] of [
      ['/usr/lib/x86_64-linux-gnu', "the host's programs and libraries"],
      ['/lib64/ld-linux-x86-64.so.2', "the host's programs and libraries"], // /lib64 -> usr/lib64 on a merged /usr
      ['/bin', "the host's programs and libraries"],
      ['/etc/ld.so.preload', "the dynamic loader's configuration"],
      ['/etc/ld.so.conf.d/x.conf', "the dynamic loader's configuration"],
      ['/etc/nsswitch.conf', "libc's NSS configuration"],
      ['/etc/ssl/openssl.cnf', "OpenSSL's directory"],
      ['/etc', "the dynamic loader's configuration"],
      ['/proc/self', "the kernel's view"],
      ['/dev/urandom', "the kernel's view"],
      ['/sys', "the kernel's view"],
    ]) {
      await expect(at(path), path).rejects.toThrow(what);
    }
    expect(SYSTEM_PATHS.map((p) => p.path)).toContain('/usr');
  });

  it("refuses Node, its install, and where Node looks for modules outside node_modules ($HOME, NODE_PATH)", async () => {
    await expect(at('/root/.node_modules')).rejects.toThrow("is Node's global module folder ($HOME) /root/.node_modules");
    await expect(at('/root')).rejects.toThrow('contains');
    // A pod's HOME or NODE_PATH inside its own mount: the mount is refused (for an image that takes
    // them from a pod: NeoSet's refuses both outright, process-host-safety.test.ts).
    const tool = { image: 'neoset.local/tool:1' };
    await expect(mounts([{ name: 'cfg', mountPath: '/etc/config' }], tool, { HOME: '/etc/config/home' })).rejects.toThrow("contains Node's global module folder ($HOME) /etc/config/home/.node_modules");
    await expect(mounts([{ name: 'cfg', mountPath: '/etc/config' }], tool, { NODE_PATH: 'x:/etc/config/lib' })).rejects.toThrow('contains a NODE_PATH directory /etc/config/lib');
  });

  it("a pod workingDir cannot move the function into a mount: refused before any mount for NeoSet's image", async () => {
    await expect(mounts([{ name: 'cfg', mountPath: '/etc/config' }], { workingDir: '/etc/config' })).rejects.toThrow(`workingDir /etc/config is not the image's (${CHECKOUT})`);
  });

  it("refuses the container's program, its directory and the symlinks to it", async () => {
    const tool = (mountPath: string) => mounts([{ name: 'cfg', mountPath }], { image: 'neoset.local/tool:1' });
    await expect(tool(join(dir, 'bin'))).rejects.toThrow(`is the container's program's directory ${join(dir, 'bin')}`);
    await expect(tool(join(dir, 'bin', 'tool'))).rejects.toThrow(`(${join(dir, 'real', 'tool')}) is the container's program`);
    await expect(tool(join(dir, 'real'))).rejects.toThrow(`contains the container's program ${join(dir, 'real', 'tool')}`);
    // Traefik's: its binary, and the configuration its one flag names.
    const traefik = (mountPath: string) => mounts([{ name: 'cfg', mountPath }], { image: 'neoset.local/traefik:v3.7.13' });
    await expect(traefik(join(dir, 'real'))).rejects.toThrow("is the container's program's directory");
    await expect(traefik(join(CHECKOUT, 'dev/cluster/traefik.yaml'))).rejects.toThrow(`is a file the image's command line names ${CHECKOUT}/dev/cluster/traefik.yaml`);
    await expect(traefik(join(CHECKOUT, 'dev/cluster'))).rejects.toThrow("is the image's working directory");
    // A configuration file outside the checkout named by an entry's flag.
    await expect(tool(join(dir, 'conf'))).rejects.toThrow(`contains a file the image's command line names ${join(dir, 'conf', 'tool.yaml')}`);
    expect(await traefik('/etc/traefik')).toHaveLength(1);
    // A program at the root's top level does not make the root its protected directory.
    const top = createImageTable([{ image: 'neoset.local/top:*', entrypoint: ['/neoset-top-tool'] }], {}).lookup('neoset.local/top:1')!;
    const c: V1Container = { name: 'c', image: 'neoset.local/top:1', volumeMounts: [{ name: 'cfg', mountPath: '/etc/config' }] };
    expect(await mountsOf(c, volumes, top, commandLine(c, top, {}, 'h'))).toHaveLength(1);
  });

  it('resolves symlinks in a mountPath, through the container\'s earlier mounts too', async () => {
    // As written the path is the stack's directory; it leads into the checkout.
    await expect(at(join(host, 'checkout', 'functions/reconcile/server.ts'))).rejects.toThrow(`mountPath ${join(host, 'checkout')}/functions/reconcile/server.ts (${CHECKOUT}/functions/reconcile/server.ts) is a file the image's command line names`);
    // On the host /etc/config/checkout does not exist; in the container, once `host` is at /etc/config, it is the checkout.
    await expect(mounts([{ name: 'host', mountPath: '/etc/config' }, { name: 'cfg', mountPath: '/etc/config/checkout/functions' }])).rejects.toThrow(`mountPath /etc/config/checkout/functions (${CHECKOUT}/functions) lies inside the checkout`);
    // A relative link climbs from where the volume is mounted: /etc/config/a/up is /etc.
    await expect(mounts([{ name: 'host', mountPath: '/etc/config/a' }, { name: 'cfg', mountPath: '/etc/config/a/up/ld.so.preload' }])).rejects.toThrow('(/etc/ld.so.preload) is the dynamic loader');
    await expect(mounts([{ name: 'host', mountPath: '/etc/config' }, { name: 'cfg', mountPath: '/etc/config/etc/ssl' }])).rejects.toThrow("(/etc/ssl) is OpenSSL's directory");
    // A mount where a symlink leads somewhere harmless goes to where it leads.
    const [, m] = await mounts([{ name: 'host', mountPath: '/etc/config' }, { name: 'cfg', mountPath: '/etc/config/etc/neoset-x' }]);
    expect(m.target).toBe('/etc/neoset-x');
  });

  it("refuses a mountPath that is relative or steps back, and a subPath that leaves its volume", async () => {
    await expect(at('etc/config')).rejects.toThrow("mountPath etc/config: must be an absolute path without '..'");
    await expect(at('/etc/config/../../work')).rejects.toThrow("without '..'");
    await expect(at(`/etc/${'x/'.repeat(3000)}`)).rejects.toThrow('longer than 4096 characters');
    await expect(at('/etc/config', { subPath: '../host' })).rejects.toThrow('path ../host leaves its volume');
    await expect(mounts([{ name: 'host', mountPath: '/etc/config', subPath: 'etc' }])).rejects.toThrow('subPath etc leaves volume host (it leads to /etc)');
    await expect(mounts([{ name: 'host', mountPath: '/etc/config', subPath: 'checkout/functions' }])).rejects.toThrow(`leaves volume host (it leads to ${CHECKOUT}/functions)`);
  });
});
