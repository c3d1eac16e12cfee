// A NeoSet whose namespace is being deleted, on the real API server: the namespace controller deletes
// its pods, reconcile's runs plan to create them again, and kube-apiserver's NamespaceLifecycle
// refuses each create (403, cause NamespaceTerminating). That is the namespace going away, not a
// failure: no ReplicaFailure condition is written, no run ends 'failed' (what alerts count), nothing
// is re-checked — as the built-in controllers treat that refusal.
//
// To hold the namespace in that state for long enough to see it, a ValidatingAdmissionPolicy refuses
// the NeoSet's deletion until the test lifts it: the namespace controller deletes the pods, retries
// the NeoSet.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, PLURAL } from '../../shared/api/names.ts';
import type { NeoSetStatus } from '../../shared/api/neoset.ts';
import { CONDITION_REPLICA_FAILURE } from '../../shared/core/status/conditions.ts';
import { poll } from '../../dev/cluster/wait.ts';
import { applyDenyPolicy, type DenyPolicy } from '../cluster/deny-policy.ts';
import { kubectl } from '../cluster/harness.ts';
import { applyNeoSet, untilStatus } from '../e2e/helpers.ts';
import { neosetManifest, paths, startStack, type Stack } from '../e2e/stack.ts';

const NAME = 'leaving';
const HELD = 'held by the test: the namespace stays Terminating';

interface RunOutcome {
  neoset: string;
  result: string;
  actions: string[];
  error?: string;
  skipped?: string;
  requeueAfter: number | null;
}

describe('a NeoSet in a namespace being deleted', () => {
  let stack: Stack;
  let policy: DenyPolicy | undefined;
  const outcomes: RunOutcome[] = [];
  // The functions' log lines, as an operator reads them: each event's line carries its runs' outcomes.
  const logs = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue;
        const entry = JSON.parse(line) as { msg?: string; neosets?: RunOutcome[] };
        if (entry.msg === 'event') outcomes.push(...(entry.neosets ?? []).filter((o) => !o.skipped));
      }
      done();
    },
  });

  beforeAll(async () => {
    stack = await startStack({ prefix: 'ns-terminating', logger: pino({ level: 'info' }, logs) });
    policy = await applyDenyPolicy({
      name: `neoset-test-hold-${stack.namespace}`,
      namespace: stack.namespace,
      resourceRules: [{ apiGroups: [GROUP], apiVersions: ['*'], operations: ['DELETE'], resources: [PLURAL] }],
      validations: [{ expression: 'false', message: HELD }],
    });
    await applyNeoSet(stack, neosetManifest({ name: NAME, replicas: 3 }));
    await untilStatus(stack, NAME, '3 ready pods, Idle', (n, pods) => n.status?.readyReplicas === 3 && pods.length === 3 && n.status?.phase === 'Idle');
    // The API server compiles a policy asynchronously: a dry-run deletion is refused once it holds.
    await poll('the policy to hold the NeoSet', async () => {
      const r = await stack.kubectl(['delete', `${PLURAL}.${GROUP}`, NAME, '--dry-run=server']);
      return r.code !== 0 && r.stderr.includes(HELD) ? true : undefined;
    }, { timeoutMs: 30_000, intervalMs: 250 });
  });

  afterAll(async () => {
    await policy?.remove();
    await stack?.stop();
  });

  it('its pods deleted, reconcile ends its runs "gone": no ReplicaFailure condition, no failed run, no re-check', async () => {
    const before = outcomes.length;
    const deleted = await kubectl(['delete', 'namespace', stack.namespace, '--wait=false']);
    expect(deleted.code, deleted.stderr).toBe(0);
    // The namespace controller deletes the pods; each deletion, and the pump's resync tick each
    // second, runs reconcile, which plans to create them again.
    const refused = (o: RunOutcome) => o.result === 'gone' || o.result === 'failed';
    await poll('three runs refused by the terminating namespace', async () => (outcomes.slice(before).filter(refused).length >= 3 ? true : undefined), { timeoutMs: 60_000, intervalMs: 200 });

    const after = outcomes.slice(before).filter((o) => o.neoset === `${stack.namespace}/${NAME}`);
    console.log(`namespace terminating: ${after.length} runs: ${JSON.stringify(Object.fromEntries([...new Set(after.map((o) => o.result))].map((r) => [r, after.filter((o) => o.result === r).length])))}`);
    expect(after.filter((o) => o.result === 'failed').map((o) => o.error)).toEqual([]);
    expect(after.filter((o) => o.result === 'gone').length).toBeGreaterThanOrEqual(3);
    expect(after.filter((o) => o.result === 'gone' && o.requeueAfter !== null)).toEqual([]);

    const neoset = await stack.client.request<{ metadata: { deletionTimestamp?: string }; status?: NeoSetStatus }>('GET', paths.neoset(stack.namespace, NAME));
    expect(neoset.metadata.deletionTimestamp).toBeUndefined(); // still held: the refusals were the namespace's
    expect(neoset.status?.conditions?.filter((c) => c.type === CONDITION_REPLICA_FAILURE) ?? []).toEqual([]);
  });
});
