// The dev stack's addresses on its host (dev/cluster/address-plan.ts): the flags' plan checked, and
// which of the host's routes it would take traffic from — named with the flag that moves the range.
import { describe, expect, it } from 'vitest';
import { addressPlanFrom, clusterDNSIP, conflicts, DEFAULT_ADDRESS_PLAN, kubernetesServiceIP, podNetworkOf } from '../../dev/cluster/address-plan.ts';

describe('the dev stack address plan', () => {
  it("derives kubeadm's addresses from the ranges", () => {
    expect([kubernetesServiceIP(DEFAULT_ADDRESS_PLAN), clusterDNSIP(DEFAULT_ADDRESS_PLAN), podNetworkOf(DEFAULT_ADDRESS_PLAN)]).toEqual(['10.96.0.1', '10.96.0.10', '10.244']);
    const moved = addressPlanFrom({ serviceCIDR: '172.30.0.0/16', clusterCIDR: '172.31.0.0/16', apiAddress: '192.168.250.1' });
    expect(moved).toEqual({ plan: { serviceCIDR: '172.30.0.0/16', clusterCIDR: '172.31.0.0/16', apiAddress: '192.168.250.1' } });
    if ('plan' in moved) expect([kubernetesServiceIP(moved.plan), clusterDNSIP(moved.plan), podNetworkOf(moved.plan)]).toEqual(['172.30.0.1', '172.30.0.10', '172.31']);
  });

  it('refuses flags that are not ranges it can use, naming the flag', () => {
    expect(addressPlanFrom({ clusterCIDR: '10.244.0.0/20' })).toEqual({ error: expect.stringContaining('--pod-network-cidr must be an IPv4 /16') });
    expect(addressPlanFrom({ serviceCIDR: '10.96.0.5/12' })).toEqual({ error: expect.stringContaining('--service-cidr') });
    expect(addressPlanFrom({ serviceCIDR: '10.96.0.0/28' })).toEqual({ error: expect.stringContaining('--service-cidr') });
    expect(addressPlanFrom({ apiAddress: 'example.com' })).toEqual({ error: expect.stringContaining('--api-address') });
    expect(addressPlanFrom({ serviceCIDR: '10.240.0.0/12' })).toEqual({ error: expect.stringContaining('overlap') });
    expect(addressPlanFrom({ apiAddress: '10.96.7.7' })).toEqual({ error: expect.stringContaining('must be outside') });
  });

  it("names each of the host's routes that covers an address of the plan, and the flag that moves it", () => {
    const routes = [
      { dst: 'default', dev: 'eth0' },
      { dst: '192.0.2.0/24', dev: 'eth0' },
      { dst: '10.0.0.0/8', dev: 'tun0' },
      { dst: '10.244.2.0/24', dev: 'neoset2' }, // a killed stack's bridge: the start removes it
      { dst: '10.245.0.1', dev: 'neoset-api', table: 'local', type: 'local' },
    ];
    expect(conflicts(DEFAULT_ADDRESS_PLAN, routes)).toEqual([
      "the pod network 10.244.0.0/16 overlaps the host's route 10.0.0.0/8 dev tun0 (pick another with --pod-network-cidr)",
      "the service range 10.96.0.0/12 overlaps the host's route 10.0.0.0/8 dev tun0 (pick another with --service-cidr)",
      "the API address 10.245.0.1 overlaps the host's route 10.0.0.0/8 dev tun0 (pick another with --api-address)",
    ]);
    expect(conflicts(DEFAULT_ADDRESS_PLAN, [{ dst: '10.100.4.0/24', dev: 'docker0' }])).toEqual([
      "the service range 10.96.0.0/12 overlaps the host's route 10.100.4.0/24 dev docker0 (pick another with --service-cidr)",
    ]);
    expect(conflicts(DEFAULT_ADDRESS_PLAN, [{ dst: '10.112.0.0/12', dev: 'eth1' }, { dst: '172.17.0.0/16', dev: 'docker0' }])).toEqual([]);
  });
});
