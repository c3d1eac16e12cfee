// The simulated kubelet's container readiness (dev/kubelet/pod-status.ts): ready readyDelayMs after
// the start, or after the readinessProbe's initialDelaySeconds when that is longer — as a kubelet runs
// no readiness probe before it.
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { simulatePod, type SimContext, type SimSettings } from '../../dev/kubelet/pod-status.ts';

const settings: SimSettings = {
  hostIP: '10.0.0.1',
  startDelayMs: 0,
  readyDelayMs: 300,
  crashLoopRestartMs: 1000,
  resizeDelayMs: 100,
  node: { allocatable: { cpu: '8', memory: '32Gi' } },
};

/** Runs the simulation from t = 0 to `until` ms, feeding each status back as the API server would store it. */
function readyAt(container: V1Container, until = 10_000): number | undefined {
  const marks = new Map<string, number>();
  let ids = 0;
  let pod: V1Pod = { metadata: { name: 'web-0', namespace: 'ns', uid: 'u' }, spec: { containers: [container] } };
  let now = 0;
  while (now <= until) {
    const ctx: SimContext = { now, podIP: '10.1.0.2', seen: (k) => marks.get(k), newContainerID: () => `containerd://${++ids}`, usedByOthers: { cpu: 0, memory: 0 } };
    const r = simulatePod(pod, settings, ctx);
    for (const [k, v] of Object.entries(r.marks)) marks.set(k, v);
    pod = { ...pod, status: r.status };
    if (r.status.containerStatuses?.[0]?.ready) return now;
    if (r.wakeAt === undefined) return undefined;
    now = Math.max(r.wakeAt, now + 1);
  }
  return undefined;
}

describe('simulated readiness', () => {
  it('is readyDelayMs after the start without a probe, or with a probe that has no initial delay', () => {
    expect(readyAt({ name: 'main', image: 'mysql:8.0' })).toBe(300);
    expect(readyAt({ name: 'main', image: 'mysql:8.0', readinessProbe: { tcpSocket: { port: 3306 } } })).toBe(300);
  });

  it("waits out the readinessProbe's initialDelaySeconds when it is longer", () => {
    expect(readyAt({ name: 'main', image: 'mysql:8.0', readinessProbe: { tcpSocket: { port: 3306 }, initialDelaySeconds: 2 } })).toBe(2000);
  });
});
