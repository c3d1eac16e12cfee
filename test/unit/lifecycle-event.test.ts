// SPEC §2.5 / §4.10: a lifecycle CloudEvent carries its pod's identity and state — never its env,
// annotations or spec: $K_SINK is a Broker that other namespaces' Triggers read.
import { HTTP } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import { LABEL_LIFECYCLE_STATE, LABEL_NEOSET_NAME, LABEL_POD_INDEX, LABEL_REVISION_HASH } from '../../shared/api/names.ts';
import { lifecycleCloudEvent, lifecyclePod } from '../../shared/events/lifecycle-sink.ts';

const SECRET = 's3cr3t-password';
/** What the event keeps of the pod's labels: NeoSet's own and the hook's handler label. */
const KEPT = { [LABEL_NEOSET_NAME]: 'db', [LABEL_POD_INDEX]: '2', [LABEL_REVISION_HASH]: 'db-7f', [LABEL_LIFECYCLE_STATE]: 'PreparingUpdate', 'hooks.example/serving': 'true' };
const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'db-2', namespace: 'tenant-a', uid: 'uid-2', resourceVersion: '42', labels: { app: 'db', team: 'payroll', ...KEPT }, annotations: { 'vault.example/token': SECRET }, managedFields: [{ manager: 'reconcile' }] },
  spec: { containers: [{ name: 'db', image: 'mysql:8', env: [{ name: 'MYSQL_ROOT_PASSWORD', value: SECRET }] }] },
  status: { phase: 'Running', podIP: '10.0.0.7', conditions: [{ type: 'Ready', status: 'True', message: 'm' }, { type: 'PodScheduled', status: 'True' }], containerStatuses: [{ name: 'db', imageID: 'x' }] },
};

describe('a lifecycle event (§4.10)', () => {
  it("carries the pod's name, namespace, uid, resourceVersion, NeoSet and handler labels, phase and readiness; nothing else", () => {
    const data = lifecyclePod(pod, 'tenant-a', ['hooks.example/serving']);
    const metadata = { name: 'db-2', namespace: 'tenant-a', uid: 'uid-2', resourceVersion: '42', labels: KEPT };
    expect(data).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } });
    const message = HTTP.binary(lifecycleCloudEvent({ state: 'PreparingUpdate', namespace: 'tenant-a', neoset: 'db', pod: data }));
    expect(message.headers['ce-subject']).toBe('db-2');
    expect(String(message.body)).not.toContain(SECRET);
    expect(String(message.body)).not.toMatch(/"(spec|annotations|managedFields|podIP|env)"/);
  });
});
