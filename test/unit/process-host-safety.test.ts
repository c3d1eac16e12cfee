// Process-mode pods run as root on the host: an image that runs its own program only (the stack's:
// NeoSet's, Knative's, CoreDNS's; image-table.ts fixedCommand) refuses what would make it run
// another — a pod's command, NODE_OPTIONS or LD_PRELOAD, a $(VAR) of its entrypoint that names a path.
import { describe, expect, it } from 'vitest';
import { commandLine, ContainerConfigError } from '../../dev/kubelet/process/environment.ts';
import { createImageTable, node24 } from '../../dev/kubelet/process/image-table.ts';

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

  it("still runs a user's own image table entry with the pod's command", () => {
    const own = createImageTable([{ image: 'neoset.local/tool:*', entrypoint: ['/bin/tool'] }], {}).lookup('neoset.local/tool:1')!;
    expect(commandLine({ name: 'c', command: ['/bin/other'] }, own, {}, 'h').argv).toEqual(['/bin/other']);
  });
});
