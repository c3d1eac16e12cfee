// Nothing crosses namespaces (SPEC §2.5), on the real API server with the simulated kubelet:
//   - a lifecycle CloudEvent (§4.10) carries the pod's identity and state, as the API server answered
//     the state write — never the env values, annotations or spec of the Pod, which $K_SINK (a Broker
//     every namespace's Triggers read) would hand to anyone;
//   - a refusal of the API server is reported (ReplicaFailure condition, Warning Event) by its code,
//     reason and causes, never by its whole message: here a ValidatingAdmissionPolicy — someone else's
//     words — names an object of another namespace.
import { HTTP } from 'cloudevents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poll } from '../../dev/cluster/wait.ts';
import { LABEL_LIFECYCLE_STATE } from '../../shared/api/names.ts';
import { CONDITION_REPLICA_FAILURE } from '../../shared/core/status/conditions.ts';
import { lifecycleCloudEvent, type LifecycleEvent } from '../../shared/events/lifecycle-sink.ts';
import { applyDenyPolicy, type DenyPolicy } from '../cluster/deny-policy.ts';
import { applyNeoSet, setImage, untilEvents, untilStatus } from '../e2e/helpers.ts';
import { neosetManifest, startStack, type Stack } from '../e2e/stack.ts';

const SECRET = 'hunter2-in-the-env';
const TOKEN = 'token-in-an-annotation';
/** What the policy's message says: another namespace's object, which the NeoSet's readers may not read. */
const OTHER = 'tenant-b/payroll-db';

const received: LifecycleEvent[] = [];
let stack: Stack;
let policy: DenyPolicy | undefined;
beforeAll(async () => {
  stack = await startStack({ prefix: 'tenant-data', sink: async (e) => void received.push(e) });
});
afterAll(async () => {
  await policy?.remove();
  await stack?.stop();
});

describe('nothing crosses namespaces (SPEC §2.5)', () => {
  it("a lifecycle event carries the pod's identity and state, not its env, annotations or spec", async () => {
    const neoset = neosetManifest({ name: 'hooked', replicas: 2, spec: { lifecycle: { preUpdate: { labelsHandler: { 'hooks.example/serving': 'true' } } } } });
    const template = (neoset.spec as { template: { metadata: Record<string, unknown>; spec: { containers: Record<string, unknown>[] } } }).template;
    template.metadata.annotations = { 'vault.example/token': TOKEN };
    template.spec.containers[0].env = [{ name: 'MYSQL_ROOT_PASSWORD', value: SECRET }];
    await applyNeoSet(stack, neoset);
    await untilStatus(stack, 'hooked', '2 ready', (n) => n.status?.readyReplicas === 2);
    await setImage(stack, 'hooked', 'mysql:8.1');
    // No owner holds the handler labels: each pod goes PreparingUpdate -> Updating at once.
    await poll('lifecycle events of both pods', async () => (new Set(received.filter((e) => e.neoset === 'hooked').map((e) => e.pod.metadata.name)).size === 2 ? true : undefined), { timeoutMs: 60_000, intervalMs: 200 });
    const events = received.filter((e) => e.neoset === 'hooked');
    console.log(`lifecycle events: ${events.map((e) => `${e.pod.metadata.name} ${e.state}`).join(', ')}; first data: ${JSON.stringify(events[0].pod)}`);
    for (const e of events) {
      const body = String(HTTP.binary(lifecycleCloudEvent(e)).body);
      expect(body).not.toContain(SECRET);
      expect(body).not.toContain(TOKEN);
      expect(Object.keys(e.pod).sort()).toEqual(['apiVersion', 'kind', 'metadata', 'status']);
      expect(Object.keys(e.pod.metadata).sort()).toEqual(['labels', 'name', 'namespace', 'resourceVersion', 'uid']);
      expect(e.pod.metadata.namespace).toBe(stack.namespace);
      expect(e.pod.metadata.labels[LABEL_LIFECYCLE_STATE]).toBe(e.state);
      expect(e.pod.metadata.labels).not.toHaveProperty('app'); // the tenant's own labels stay on the pod
    }
  }, 120_000);

  it("a refusal is reported by its code and reason: the API server's message (here naming another namespace's object) stays in the log", async () => {
    const message = `the ordinal is held by ${OTHER}`;
    policy = await applyDenyPolicy({
      name: `neoset-test-refuse-${stack.namespace}`,
      namespace: stack.namespace,
      resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
      validations: [{ expression: "!has(object.metadata.labels) || !('app' in object.metadata.labels) || object.metadata.labels.app != 'refused'", message, reason: 'Forbidden' }],
    });
    // The API server compiles a policy asynchronously: a dry-run create is refused once it holds.
    const probe = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe', labels: { app: 'refused' } }, spec: { containers: [{ name: 'c', image: 'x' }] } };
    await poll('the policy to refuse pods', async () => {
      const r = await stack.kubectl(['create', '--dry-run=server', '-f', '-'], JSON.stringify(probe));
      return r.code !== 0 && r.stderr.includes(OTHER) ? true : undefined;
    }, { timeoutMs: 30_000, intervalMs: 250 });

    await applyNeoSet(stack, neosetManifest({ name: 'refused', replicas: 1 }));
    const n = await untilStatus(stack, 'refused', 'ReplicaFailure', (x) => x.status?.conditions?.some((c) => c.type === CONDITION_REPLICA_FAILURE) === true, 30_000);
    const condition = n.status!.conditions!.find((c) => c.type === CONDITION_REPLICA_FAILURE)!;
    const events = await untilEvents(stack, 'refused', 'Warning FailedCreate', (list) => list.some((e) => e.type === 'Warning' && e.reason === 'FailedCreate'));
    const warning = events.find((e) => e.type === 'Warning' && e.reason === 'FailedCreate')!;
    console.log(`ReplicaFailure: ${condition.reason}: ${condition.message}; Event: ${warning.message}`);
    expect(condition.reason).toBe('FailedCreate');
    expect(condition.message).not.toContain(OTHER);
    expect(warning.message).not.toContain(OTHER);
    expect(condition.message).toBe('create Pod refused-0: 403 Forbidden');
    expect(warning.message).toBe(condition.message);
  }, 90_000);
});
