// The pure parts of the process-mode kubelet: $(VAR) expansion and the command line as kubelet makes
// them, the image table's matching, and resolv.conf per dnsPolicy.
import { describe, expect, it } from 'vitest';
import { commandLine, expand } from '../../dev/kubelet/process/environment.ts';
import { resolvConf } from '../../dev/kubelet/process/etc-files.ts';
import { createImageTable, node24 } from '../../dev/kubelet/process/image-table.ts';

describe('process mode', () => {
  it('expands $(VAR) as kubelet does: defined names only, $$ escapes', () => {
    expect(expand('$(A)-$(B)-$$(A)-$(A', { A: 'x' })).toBe('x-$(B)-$(A)-$(A');
  });

  it("runs the spec's command instead of the image's entrypoint and cmd, args instead of cmd", () => {
    const image = { image: 'i', entrypoint: ['/bin/e'], cmd: ['c'], env: { X: '1' }, workingDir: '/w' };
    expect(commandLine({ name: 'c', args: ['$(X)'] }, image, {}, 'h').argv).toEqual(['/bin/e', '1']);
    expect(commandLine({ name: 'c', command: ['node', 'x'] }, image, {}, 'h').argv).toEqual([node24(), 'x']);
    expect(commandLine({ name: 'c' }, image, { X: '2' }, 'h')).toMatchObject({ argv: ['/bin/e', 'c'], workingDir: '/w', env: { X: '2', HOSTNAME: 'h' } });
  });

  it("matches references as written or normalized; a user's entry wins over the defaults", () => {
    const table = createImageTable([{ image: 'nginx:1.*', entrypoint: ['/n'] }], {});
    expect(table.lookup('docker.io/library/nginx:1.27')?.entrypoint).toEqual(['/n']);
    expect(table.lookup('nginx:2')).toBeUndefined();
    expect(table.lookup('ghcr.io/neoset/neoset:0.1.0')?.entrypoint.slice(-1)).toEqual(['functions/$(NEOSET_FUNCTION)/server.ts']);
    expect(() => createImageTable([{ image: 'x', bogus: 1 } as never], {})).toThrow();
  });

  it('writes resolv.conf per dnsPolicy', () => {
    const dns = { clusterDNS: '10.96.0.10', clusterDomain: 'cluster.local' };
    const pod = { metadata: { namespace: 'ns' }, spec: { containers: [] } };
    expect(resolvConf(pod, dns)).toMatch(/^search ns\.svc\.cluster\.local svc\.cluster\.local cluster\.local.*\nnameserver 10\.96\.0\.10\noptions ndots:5\n$/);
    const none = { ...pod, spec: { containers: [], dnsPolicy: 'None', dnsConfig: { nameservers: ['1.2.3.4'], options: [{ name: 'ndots', value: '2' }] } } };
    expect(resolvConf(none, dns)).toBe('nameserver 1.2.3.4\noptions ndots:2\n');
  });
});
