// The dev stack on a host it does not own (issue 34): it leaves the host as it found it. Real routes,
// links, network namespaces, nftables and sysctls of this machine (root, as the Knative stack needs);
// the services lane, one file at a time, since the service network is the machine's.
//
//   - it refuses to take a range one of the host's routes covers, naming the route and the flag;
//   - net.ipv4.ip_forward, which the CNI bridge turns on, is set back — at a node network's stop, and
//     at the start after a stack that was killed (its record in /run/neoset);
//   - what a killed stack left is removed by the next start, and only what is ours;
//   - kube-proxy's start (and stop) leaves the iptables chains of a host's own kube-proxy alone.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { removeLeftovers } from '../../dev/cluster/leftovers.ts';
import { resolveCniPlugins, resolveCoreDns } from '../../dev/cluster/binaries.ts';
import { startControlPlane, WORKLOAD_CONTROLLERS } from '../../dev/cluster/control-plane.ts';
import { startServices } from '../../dev/cluster/services.ts';
import { startKubelet } from '../../dev/kubelet/kubelet.ts';
import { API_LINK, claimServiceNetwork, sweepNow } from '../../dev/cluster/service-network.ts';
import { IP_FORWARD_RECORD } from '../../dev/kubelet/process/ip-forward.ts';
import { createNodeNetwork, STATE_ROOT } from '../../dev/kubelet/process/network.ts';
import { pressCtrlCOnKnative } from '../e2e/footprint.ts';
import { startKnativeDev, untilOutput } from '../e2e/terminal.ts';

const ip = (...args: string[]) => spawnSync('ip', args, { encoding: 'utf8' });
const root = process.getuid?.() === 0 && ip('netns', 'list').status === 0;
const IP_FORWARD = '/proc/sys/net/ipv4/ip_forward';
const ipForward = () => readFileSync(IP_FORWARD, 'utf8').trim();
const setIpForward = (value: string) => writeFileSync(IP_FORWARD, `${value}\n`);
const linkExists = (name: string) => ip('link', 'show', name).status === 0;
const namespaces = () => ip('netns', 'list').stdout.split('\n').map((l) => l.split(' ')[0]!);
/** A link of the host's own, not named as ours, carrying a route (no dummy driver in every kernel: a bridge). */
const HOST_LINK = 'hostnet-t34';

describe.runIf(root)('the dev stack leaves its host as it found it', () => {
  let forwardBefore: string;
  beforeAll(() => {
    forwardBefore = ipForward();
  });
  afterEach(() => {
    ip('link', 'del', HOST_LINK);
  });
  afterAll(() => {
    setIpForward(forwardBefore);
    for (const ns of namespaces().filter((n) => /^neoset-(251|252|253)-/.test(n))) ip('netns', 'del', ns);
    for (const node of ['neoset251', 'neoset252', 'neoset253']) {
      ip('link', 'del', node);
      spawnSync('rm', ['-rf', join(STATE_ROOT, node)]);
    }
  });

  it("refuses a range one of the host's routes covers, naming the route and the flag, and changes nothing", async () => {
    ip('link', 'add', HOST_LINK, 'type', 'bridge');
    ip('link', 'set', HOST_LINK, 'up');
    expect(ip('route', 'add', '10.96.128.0/24', 'dev', HOST_LINK).status).toBe(0);
    const refused = await claimServiceNetwork(() => {}).then(
      async (claim) => {
        await claim.release();
        return `claimed anyway: ${API_LINK} at ${claim.address} made beside the host's route`;
      },
      (err: Error) => err.message,
    );
    console.log(`[dev-host] with a host route 10.96.128.0/24: ${refused}`);
    expect(refused).toContain("the service range 10.96.0.0/12 overlaps the host's route 10.96.128.0/24 dev hostnet-t34");
    expect(refused).toContain('--service-cidr');
    expect(linkExists(API_LINK)).toBe(false);
    expect(existsSync(join(STATE_ROOT, 'services'))).toBe(false);

    // The flag's range: taken, the host's route untouched.
    const claim = await claimServiceNetwork(() => {}, { clusterCIDR: '10.244.0.0/16', serviceCIDR: '10.112.0.0/12', apiAddress: '10.245.0.1' });
    expect(claim.address).toBe('10.245.0.1');
    await claim.release();
    expect(ip('route', 'show', '10.96.128.0/24').stdout).toContain(HOST_LINK);
  });

  it('npm run dev refuses to start on such a host: exit 2, the route and the flag named, nothing made', async () => {
    ip('link', 'add', HOST_LINK, 'type', 'bridge');
    ip('link', 'set', HOST_LINK, 'up');
    expect(ip('route', 'add', '10.244.7.0/24', 'dev', HOST_LINK).status).toBe(0);
    const dev = startKnativeDev();
    const code = await dev.exited;
    rmSync(dev.dir, { recursive: true, force: true });
    const said = dev.output().split('\n').filter((line) => line.includes('overlaps'));
    console.log(`[dev-host] npm run dev with a host route 10.244.7.0/24: exit ${code}; ${said.join(' / ')}`);
    expect(code, dev.output()).toBe(2);
    expect(said.join('\n')).toContain("the pod network 10.244.0.0/16 overlaps the host's route 10.244.7.0/24 dev hostnet-t34 (pick another with --pod-network-cidr)");
    expect(linkExists(API_LINK)).toBe(false);
  }, 240_000);

  it('npm run dev runs beside such a route on the ranges its flags pick', async () => {
    ip('link', 'add', HOST_LINK, 'type', 'bridge');
    ip('link', 'set', HOST_LINK, 'up');
    expect(ip('route', 'add', '10.96.128.0/24', 'dev', HOST_LINK).status).toBe(0);
    const dev = startKnativeDev(['--pod-network-cidr', '10.250.0.0/16', '--service-cidr', '10.112.0.0/12', '--api-address', '10.251.0.1']);
    try {
      await untilOutput(dev, 'NeoSet dev stack ready');
      const kubectl = (...args: string[]) => spawnSync('kubectl', ['--kubeconfig', join(dev.dir, 'kubeconfig'), ...args], { encoding: 'utf8' }).stdout;
      const podIPs = (JSON.parse(kubectl('get', 'pods', '-A', '-o', 'json')) as { items: { status: { podIP?: string } }[] }).items.map((p) => p.status.podIP).filter(Boolean);
      const clusterIPs = ['default/kubernetes', 'kube-system/kube-dns'].map((s) => kubectl('get', 'service', '-n', s.split('/')[0]!, s.split('/')[1]!, '-o', 'jsonpath={.spec.clusterIP}'));
      console.log(`[dev-host] with the flags: ${podIPs.length} pod IPs (${podIPs.slice(0, 3).join(', ')}, …), ClusterIPs ${clusterIPs.join(', ')}, ${dev.output().match(/kube-apiserver \S+ at \S+/)?.[0]}`);
      expect(podIPs.length).toBeGreaterThan(10);
      expect(podIPs.every((a) => a!.startsWith('10.250.'))).toBe(true);
      expect(clusterIPs).toEqual(['10.112.0.1', '10.112.0.10']);
      expect(dev.output()).toContain('at https://10.251.0.1:');
    } finally {
      const { left, code } = await pressCtrlCOnKnative(dev);
      rmSync(dev.dir, { recursive: true, force: true });
      expect(left).toEqual({ netns: [], links: [], tables: [], processes: [] });
      expect(code).toBe(0);
    }
    expect(ip('route', 'show', '10.96.128.0/24').stdout).toContain(HOST_LINK);
  }, 240_000);

  it('sets ip_forward back when the last node network stops (the CNI bridge turned it on)', async () => {
    setIpForward('0');
    const lines: string[] = [];
    const network = await createNodeNetwork(251, await resolveCniPlugins(), (line) => lines.push(line));
    try {
      await network.add('0123456789abcdef', '10.244.251.7', { namespace: 'default', name: 'p' });
      expect(ipForward()).toBe('1');
    } finally {
      await network.stop();
    }
    console.log(`[dev-host] ip_forward after a node network's stop: ${ipForward()} (${lines.filter((l) => l.includes('ip_forward')).join('; ')})`);
    expect(ipForward()).toBe('0');
    expect(existsSync(IP_FORWARD_RECORD)).toBe(false);
  });

  it("removes at a start what a killed stack left — its pods' processes, namespaces, bridge, interface, kube-proxy's tables, ip_forward — and says so", async () => {
    setIpForward('0');
    // A stack that is killed: its node network (a pod process inside) and service network, ip_forward turned on.
    const ours = await createNodeNetwork(252, await resolveCniPlugins(), () => {});
    await ours.add('fedcba9876543210', '10.244.252.7', { namespace: 'default', name: 'q' });
    const netns = ours.netnsName('fedcba9876543210');
    const sleeper = spawn('ip', ['netns', 'exec', netns, 'sleep', '600'], { detached: true, stdio: 'ignore' });
    const sleeperGone = new Promise((resolve) => sleeper.on('exit', resolve));
    for (let i = 0; i < 100 && ip('netns', 'pids', netns).stdout.trim() === ''; i++) await new Promise((r) => setTimeout(r, 20));
    const claim = await claimServiceNetwork(() => {});
    spawnSync('nft', ['add', 'table', 'ip', 'kube-proxy']);
    spawnSync('nft', ['add', 'table', 'ip6', 'kube-proxy']);
    expect(ipForward()).toBe('1');
    void claim; // never released: the process "dies" here
    const dead = 999_999_999;
    writeFileSync(join(STATE_ROOT, 'neoset252', 'owner'), `${dead}\n`);
    writeFileSync(join(STATE_ROOT, 'services', 'owner'), `${dead}\n`);
    // Another owner's, alive (pid 1): left alone.
    mkdirSync(join(STATE_ROOT, 'neoset253'), { recursive: true });
    writeFileSync(join(STATE_ROOT, 'neoset253', 'owner'), '1\n');
    ip('link', 'add', 'neoset253', 'type', 'bridge');
    ip('netns', 'add', 'neoset-253-00000000aaaa');

    const said: string[] = [];
    await removeLeftovers((line) => said.push(line));
    console.log(`[dev-host] ${said.join('\n')}`);
    await sleeperGone;
    expect(namespaces()).not.toContain(netns);
    expect(linkExists('neoset252')).toBe(false);
    expect(linkExists(API_LINK)).toBe(false);
    expect(spawnSync('nft', ['list', 'tables'], { encoding: 'utf8' }).stdout).not.toMatch(/kube-proxy/);
    expect(said.join('\n')).toMatch(/removed what an earlier dev stack left \(pid 999999999, gone without its stop\): 1 pod process, 1 network namespace \(their veths with them\), the bridge neoset252, neoset-api, nftables table ip kube-proxy, nftables table ip6 kube-proxy/);
    // Another live owner's node keeps ip_forward on, and its namespace and bridge stay.
    expect(namespaces()).toContain('neoset-253-00000000aaaa');
    expect(linkExists('neoset253')).toBe(true);
    expect(ipForward()).toBe('1');

    // Once that one is gone too, the start after it sets ip_forward back and says so.
    writeFileSync(join(STATE_ROOT, 'neoset253', 'owner'), `${dead}\n`);
    said.length = 0;
    await removeLeftovers((line) => said.push(line));
    console.log(`[dev-host] ${said.join('\n')}`);
    expect(ipForward()).toBe('0');
    expect(said.join('\n')).toContain('net.ipv4.ip_forward set back to 0');
    expect(existsSync(IP_FORWARD_RECORD)).toBe(false);
  });

  it("the stop's deadline (sweepNow) sets ip_forward back too", async () => {
    setIpForward('0');
    const network = await createNodeNetwork(251, await resolveCniPlugins(), () => {});
    await network.add('00112233445566778899', '10.244.251.9', { namespace: 'default', name: 'r' });
    expect(ipForward()).toBe('1');
    sweepNow();
    expect(linkExists('neoset251')).toBe(false);
    expect(ipForward()).toBe('0');
  });
});

// What a host's kube-proxy in iptables mode keeps (pkg/proxy/iptables): the chains kube-proxy's
// start-up cleanup looks for (cleanupLeftoversForFamily) — KUBE-SERVICES and the Services' KUBE-SVC-…
// in nat, KUBE-FORWARD in filter — with a rule in each, as a live one has them.
const HOST_CHAINS = [
  ['nat', 'KUBE-SERVICES'],
  ['nat', 'KUBE-SVC-NEOSETHOSTTEST34'],
  ['filter', 'KUBE-FORWARD'],
] as const;
const iptables = (...args: string[]) => spawnSync('iptables', args, { encoding: 'utf8' });
const hasIptables = root && iptables('--version').status === 0;
const hostChains = () => HOST_CHAINS.filter(([table, chain]) => iptables('-t', table, '-S', chain).status === 0).map(([table, chain]) => `${table}/${chain}`);

const nftTables = () => spawnSync('nft', ['list', 'tables'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);

describe.runIf(hasIptables)("kube-proxy of the dev stack beside a host's own kube-proxy (iptables mode)", () => {
  // iptables-nft keeps its tables in nftables (`ip nat`, `ip filter`): the ones this test makes go too.
  const tablesBefore = hasIptables ? nftTables() : [];
  afterAll(() => {
    for (const [table, chain] of HOST_CHAINS) {
      iptables('-t', table, '-F', chain);
      iptables('-t', table, '-X', chain);
    }
    for (const table of nftTables().filter((t) => !tablesBefore.includes(t) && /^table ip (nat|filter)$/.test(t))) spawnSync('nft', ['delete', ...table.split(' ')]);
  });

  it("leaves the host kube-proxy's iptables chains as they were, at its start and at its stop", async () => {
    for (const [table, chain] of HOST_CHAINS) {
      expect(iptables('-t', table, '-N', chain).status).toBe(0);
      expect(iptables('-t', table, '-A', chain, '-d', '192.0.2.34/32', '-j', 'RETURN').status).toBe(0);
    }
    const before = hostChains();
    expect(before).toHaveLength(3);
    const log: string[] = [];
    const cp = await startControlPlane({ serviceNetwork: true, extraControllers: WORKLOAD_CONTROLLERS, log: (l) => log.push(l) });
    try {
      const kubelet = await startKubelet({ kubeConfig: cp.kubeConfig(), nodeName: 'host-node', log: (l) => log.push(l), processMode: { programs: { coredns: await resolveCoreDns() } } });
      try {
        const services = await startServices(cp, { nodeName: kubelet.nodeName, log: (l) => log.push(l) });
        // kube-proxy has run its start-up (it answered /healthz, and CoreDNS is reached through it).
        const afterStart = hostChains();
        await services.stop();
        const afterStop = hostChains();
        console.log(`[dev-host] host iptables chains: before ${before.join(', ')}; after kube-proxy's start ${afterStart.join(', ') || 'none'}; after its stop ${afterStop.join(', ') || 'none'}`);
        expect(afterStart).toEqual(before);
        expect(afterStop).toEqual(before);
        expect(iptables('-t', 'nat', '-S', 'KUBE-SERVICES').stdout).toContain('192.0.2.34/32');
      } finally {
        await kubelet.stop();
      }
    } finally {
      await cp.stop();
    }
  }, 180_000);
});
