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

/** Most messages one aggregated Event carries; the rest are counted. */
const MAX_IN_ONE = 10;

/**
 * The Events of one plan, recorded once the plan's writes are done, one per reason (SPEC §2.0: a
 * series per reason, not one Event per pod action): a batch of k pods starting costs one Event, not k.
 * Each aggregated Event's name comes from its members' keys, so a replayed plan records it at most once.
 */
export function eventBatch(client: KubeClient, owner: Owner, now: () => Date, instance?: string) {
  const pending: { key: string; spec: EventSpec }[] = [];
  return {
    add: async (key: string, spec: EventSpec): Promise<void> => {
      pending.push({ key, spec });
    },
    /** Best effort, like every Event: a failure to record one never fails the reconcile. */
    flush: async (): Promise<void> => {
      const groups = new Map<string, { key: string; spec: EventSpec }[]>();
      for (const e of pending.splice(0)) {
        const id = `${e.spec.type}/${e.spec.reason}`;
        groups.set(id, [...(groups.get(id) ?? []), e]);
      }
      await Promise.all(
        [...groups.values()].map((members) => {
          const [{ spec }] = members;
          const shown = members.slice(0, MAX_IN_ONE).map((m) => m.spec.message);
          const more = members.length > MAX_IN_ONE ? `; and ${members.length - MAX_IN_ONE} more` : '';
          const message = members.length === 1 ? spec.message : `${shown.join('; ')}${more}`;
          return recordEvent(client, owner, members.map((m) => m.key).join('|'), { ...spec, message }, now(), instance).catch(() => undefined);
        }),
      );
    },
  };
}

