// Turns a Plan into API writes (STYLE §2: one switch). Every write is conditional on the
// resourceVersion (or uid) the action was computed from; the first lost race (409) ends the
// application — the winner's write produces a new event, and the next decide() starts from it.
import { createHash } from 'node:crypto';
import { ANNOTATION_INPLACE_STATE, API_VERSION, CONDITION_INPLACE_READY, KIND, LABEL_REVISION_HASH } from '../api/names.ts';
import type { Action, EventSpec, ObjectRef, Plan } from '../core/plan.ts';
import type { ObjectMeta } from '../core/k8s.ts';
import type { Snapshot } from '../core/snapshot.ts';
import { inPlaceUpdateDuration } from '../metrics/registry.ts';
import { ApiError, type KubeClient } from './client.ts';
import { paths } from './paths.ts';

export interface ApplyResult {
  /** 'conflict': a write lost a race and nothing after it was attempted. */
  outcome: 'applied' | 'conflict';
  /** Kinds of the actions written, in order (for the invocation's log line). */
  written: string[];
  statusWritten: boolean;
}

export interface ApplyOptions {
  now?: () => Date;
  /** Reported as the Event's reportingInstance. */
  instance?: string;
}

export async function applyPlan(client: KubeClient, snapshot: Snapshot, plan: Plan, opts: ApplyOptions = {}): Promise<ApplyResult> {
  const now = opts.now ?? (() => new Date());
  const ns = snapshot.neoset.metadata.namespace ?? 'default';
  const written: string[] = [];
  // A plan may hold two writes to one object (e.g. annotation, then condition). The second was
  // computed from the same resourceVersion as the first; once our own first write succeeded, the
  // version it produced is the one to check against — anything else still conflicts.
  const successor = new Map<string, string>();
  const rv = (ref: ObjectRef) => successor.get(`${ref.uid}/${ref.resourceVersion}`) ?? ref.resourceVersion;
  const wrote = (ref: ObjectRef, result: { metadata?: ObjectMeta } | undefined) => {
    const next = result?.metadata?.resourceVersion;
    if (next) successor.set(`${ref.uid}/${ref.resourceVersion}`, next);
  };
  const event = async (key: string, spec: EventSpec) => recordEvent(client, snapshot, key, spec, now(), opts.instance);

  try {
    for (const action of plan.actions) {
      await applyAction(client, ns, action, { rv, wrote, event, now, snapshot });
      written.push(action.kind);
    }
    let statusWritten = false;
    if (plan.status) {
      const { neoset } = snapshot;
      await client.request('PUT', paths.neosetStatus(ns, neoset.metadata.name), {
        body: { apiVersion: neoset.apiVersion, kind: neoset.kind, metadata: neoset.metadata, spec: neoset.spec, status: plan.status },
      });
      statusWritten = true;
    }
    return { outcome: 'applied', written, statusWritten };
  } catch (err) {
    if (err instanceof ApiError && (err.isConflict || (err.isNotFound && err.verb !== 'GET'))) {
      // 409: lost a race. 404 on a write: the object was deleted under us. Either way the snapshot
      // is stale; the change that made it stale is itself an event.
      return { outcome: 'conflict', written, statusWritten: false };
    }
    throw err;
  }
}

interface Ctx {
  rv: (ref: ObjectRef) => string;
  wrote: (ref: ObjectRef, result: { metadata?: ObjectMeta } | undefined) => void;
  event: (key: string, spec: EventSpec) => Promise<void>;
  now: () => Date;
  snapshot: Snapshot;
}

type Written = { metadata?: ObjectMeta } | undefined;

async function applyAction(client: KubeClient, ns: string, action: Action, ctx: Ctx): Promise<void> {
  const meta = (ref: ObjectRef) => ({ resourceVersion: ctx.rv(ref) });
  const preconditions = (ref: ObjectRef) => ({ kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: ref.uid, resourceVersion: ctx.rv(ref) } });
  const keyOf = (kind: string, result: Written) => `${kind}/${result?.metadata?.uid}/${result?.metadata?.resourceVersion}`;

  switch (action.kind) {
    case 'createRevision': {
      const r = await client.request<Written>('POST', paths.revisions(ns), { body: { apiVersion: 'apps/v1', kind: 'ControllerRevision', ...action.revision } });
      return ctx.event(keyOf(action.kind, r), action.event);
    }
    case 'renumberRevision': {
      const r = await client.request<Written>('PATCH', paths.revision(ns, action.revision.name), {
        patch: 'merge',
        body: { metadata: meta(action.revision), revision: action.number },
      });
      ctx.wrote(action.revision, r);
      return ctx.event(keyOf(action.kind, r), action.event);
    }
    case 'deleteRevision':
      await client.request('DELETE', paths.revision(ns, action.revision.name), { body: preconditions(action.revision) });
      return;
    case 'createPVC': {
      const r = await client.request<Written>('POST', paths.pvcs(ns), { body: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...action.pvc } });
      return ctx.event(keyOf(action.kind, r), action.event);
    }
    case 'setPVCOwners': {
      const r = await client.request<Written>('PATCH', paths.pvc(ns, action.pvc.name), {
        patch: 'merge',
        body: { metadata: { ...meta(action.pvc), ownerReferences: action.ownerReferences } },
      });
      ctx.wrote(action.pvc, r);
      return;
    }
    case 'createPod': {
      const r = await client.request<Written>('POST', paths.pods(ns), { body: { apiVersion: 'v1', kind: 'Pod', ...action.pod } });
      return ctx.event(keyOf(action.kind, r), action.event);
    }
    case 'deletePod': {
      await client.request('DELETE', paths.pod(ns, action.pod.name), { body: preconditions(action.pod) });
      return ctx.event(`${action.kind}/${action.pod.uid}`, action.event);
    }
    case 'markDraining': {
      const r = await client.request<Written>('PATCH', paths.pod(ns, action.pod.name), {
        patch: 'merge',
        body: { metadata: { ...meta(action.pod), annotations: { [ANNOTATION_INPLACE_STATE]: JSON.stringify(action.state) } } },
      });
      ctx.wrote(action.pod, r);
      return ctx.event(keyOf(action.kind, r), action.event);
    }
    case 'setInPlaceReady': {
      // pods/status with a strategic merge patch: conditions merge by type (SPEC §8).
      const r = await client.request<Written>('PATCH', paths.podStatus(ns, action.pod.name), {
        patch: 'strategic',
        body: {
          metadata: meta(action.pod),
          status: {
            conditions: [
              { type: CONDITION_INPLACE_READY, status: action.status, reason: action.reason, message: action.message, lastTransitionTime: rfc3339(ctx.now()) },
            ],
          },
        },
      });
      ctx.wrote(action.pod, r);
      return;
    }
    case 'patchImages': {
      const r = await client.request<Written>('PATCH', paths.pod(ns, action.pod.name), {
        patch: 'strategic',
        body: {
          metadata: {
            ...meta(action.pod),
            // Template label/annotation changes travel with the images (null removes one).
            labels: { ...action.labels, [LABEL_REVISION_HASH]: action.revision },
            annotations: { ...action.annotations, [ANNOTATION_INPLACE_STATE]: JSON.stringify(action.state) },
          },
          spec: { containers: Object.entries(action.images).map(([name, image]) => ({ name, image })) },
        },
      });
      ctx.wrote(action.pod, r);
      return ctx.event(keyOf(action.kind, r), action.event);
    }
    case 'finishInPlaceUpdate': {
      const r = await client.request<Written>('PATCH', paths.pod(ns, action.pod.name), {
        patch: 'merge',
        body: { metadata: { ...meta(action.pod), annotations: { [ANNOTATION_INPLACE_STATE]: null } } },
      });
      ctx.wrote(action.pod, r);
      // Observed by the one writer whose conditional write succeeded: once per update.
      // An aborted drain changed no image: it is not an update duration.
      const { neoset } = ctx.snapshot;
      if (!action.aborted) inPlaceUpdateDuration.observe({ namespace: ns, neoset: neoset.metadata.name }, action.durationSeconds);
      return ctx.event(keyOf(action.kind, r), action.event);
    }
    case 'recordEvent':
      return ctx.event(action.key, action.event);
  }
}

const rfc3339 = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * Records a core/v1 Event on the NeoSet (so `kubectl describe neo` tells the story). The name is
 * derived from `key`, so a replayed action or a second instance records it at most once.
 */
async function recordEvent(client: KubeClient, snapshot: Snapshot, key: string, spec: EventSpec, now: Date, instance = 'neoset'): Promise<void> {
  const { neoset } = snapshot;
  const ns = neoset.metadata.namespace ?? 'default';
  const digest = createHash('sha256').update(`${neoset.metadata.uid}/${key}`).digest('hex').slice(0, 16);
  const time = rfc3339(now);
  try {
    await client.request('POST', paths.events(ns), {
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${neoset.metadata.name}.${digest}`, namespace: ns },
        involvedObject: { apiVersion: API_VERSION, kind: KIND, name: neoset.metadata.name, namespace: ns, uid: neoset.metadata.uid },
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
