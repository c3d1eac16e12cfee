// Kubernetes Events on the NeoSet, so that `kubectl describe neo` tells the story (SPEC §4.6).
import { createHash } from 'node:crypto';
import { API_VERSION, KIND } from '../api/names.ts';
import type { EventSpec } from '../core/plan.ts';
import { rfc3339 } from '../core/time.ts';
import { ApiError, type KubeClient } from './client.ts';
import type { Owner } from './owner.ts';
import { paths } from './paths.ts';

/**
 * Records a core/v1 Event on the NeoSet (so `kubectl describe neo` tells the story). The name is
 * derived from `key`, so a replayed action or a second instance records it at most once.
 */
export async function recordEvent(client: KubeClient, owner: Owner, key: string, spec: EventSpec, now: Date, instance = 'neoset'): Promise<void> {
  const ns = owner.namespace;
  const digest = createHash('sha256').update(`${owner.uid}/${key}`).digest('hex').slice(0, 16);
  const time = rfc3339(now.getTime());
  try {
    await client.request('POST', paths.events(ns), {
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${owner.name}.${digest}`, namespace: ns },
        involvedObject: { apiVersion: API_VERSION, kind: KIND, name: owner.name, namespace: ns, uid: owner.uid },
        type: spec.type,
        reason: spec.reason,
        message: spec.message,
        source: { component: 'neoset' },
        reportingComponent: 'neo.io/neoset',
        reportingInstance: instance,
        firstTimestamp: time,
        lastTimestamp: time,
        count: 1,
      },
    });
  } catch (err) {
    // Already recorded (a replay) — or Events are best effort: never let one fail the reconcile.
    if (err instanceof ApiError && (err.isConflict || !err.isTransient)) return;
    throw err;
  }
}
