// Turns a Plan into API writes (STYLE §2: one switch). Every write is conditional on the
// resourceVersion (or uid) the action was computed from — never an empty one: a write that would go
// out without one is refused before it is sent (UnconditionalWriteError; creates are conditional on
// the name being free). A plan that claims (§2.0) writes the status
// first — after only the releases of claims it does not act on — conditional on the NeoSet's
// resourceVersion; then the actions in order. The first lost race (409) ends the application — the
// winner's write produces a new event, and the next decide() starts from it. Any other refusal is
// made visible (failures.ts). Events: events.ts.
import {
  ANNOTATION_CLAIM_RELEASED,
  ANNOTATION_INPLACE_STATE,
  ANNOTATION_LIFECYCLE_SINCE,
  LABEL_LIFECYCLE_STATE,
  LABEL_REVISION_HASH,
} from '../api/names.ts';
import type { NeoSet, NeoSetStatus } from '../api/neoset.ts';
import type { ObjectMeta } from '../core/objects.ts';
import { writeGroup, writeOrder } from '../core/actions.ts';
import { nameTaken, type Created } from '../core/adoption.ts';
import type { Action, EventSpec, ObjectRef, Plan } from '../core/plan.ts';
import type { Snapshot } from '../core/snapshot.ts';
import { rfc3339 } from '../core/time.ts';
import { gateCondition } from '../core/update/pod-writes.ts';
import { inPlaceUpdateDuration } from '../metrics/registry.ts';
import { ApiError, type KubeClient } from './client.ts';
import { mapBounded } from './coalesce.ts';
import { eventBatch, recordEvent } from './events.ts';
import { OwnRefusal, reportFailure, withoutFailure } from './failures.ts';
import { ownerOf, type Owner } from './owner.ts';
import { lifecyclePod, type LifecycleSink } from '../events/lifecycle-sink.ts';
import { notificationEvent, type NotificationSink } from '../events/notify.ts';
import { notifications } from '../core/notifications.ts';

export type { Owner } from './owner.ts';
import { paths } from './paths.ts';
import { POD_LONG_STRINGS } from './pod-trim.ts';
import { gateOp, removeStateOp, type JsonPatchOp, type PodFacts } from './pod-facts.ts';
import { handledFromBirth } from '../handled.ts';

export interface ApplyResult {
  /**
   * 'conflict': a write lost a race (or the claim did) and nothing after it was attempted;
   * 'failed': the API server refused a write for another reason; it is reported (Event, condition);
   * 'gone': the NeoSet's namespace is being deleted (a create refused with NamespaceTerminating):
   * nothing to report, the NeoSet goes with it — as the built-in controllers treat it.
   */
  outcome: 'applied' | 'conflict' | 'failed' | 'gone';
  /** Kinds of the writes made, in order, the claim and status writes included (for the invocation's log line). */
  written: string[];
  statusWritten: boolean;
  /** 'conflict' on the NeoSet's own write (its claim or status): the NeoSet read was not the newest. */
  neosetWriteLost?: boolean;
  /** What the API server said, for 'failed' and for a transient error. */
  error?: ApiError;
}

export interface ApplyOptions {
  now?: () => Date;
  /** Where lifecycle state changes go as CloudEvents (SPEC §4.10: $K_SINK); none: not sent. */
  sink?: LifecycleSink;
  /** Where rollout notifications go (SPEC §4.12: $K_SINK), once the status that makes them true is written; none: not sent. */
  notify?: NotificationSink;
  /** Reported as the Event's reportingInstance. */
  instance?: string;
  /**
   * Given the plan's Events in flight, once every write has landed, instead of their being awaited:
   * nothing decides from Events, so the NeoSet's next decision need not wait for them; the caller
   * awaits them before it answers the event (SPEC §2.0, "nothing lost").
   */
  defer?: (tail: Promise<void>) => void;
  /**
   * applyPodWrites only: the actions were decided on these facts of the pod (an event's, not read):
   * each write is a JSON Patch that tests them first (pod-facts.ts) instead of carrying a
   * resourceVersion, and a failed test is a conflict.
   */
  facts?: PodFacts;
  /**
   * applyPlan only: the snapshot's NeoSet came from the watch cache (snapshot-reader.ts
   * readSnapshotCached) and may be older than etcd's. The decision's own Events (recordEvent: a
   * canary step, a rollout completed, a failure) then go out only once a NeoSet write of the plan has
   * landed — which proves the NeoSet read was the newest —, or with the others when the plan writes
   * no NeoSet; a lost NeoSet write drops them (the decision made again from etcd records its own).
   * The Events of pod writes go out as always: those writes were made.
   */
  neosetFromCache?: boolean;
}

/** Raised inside the applier for an AlreadyExists that is not a race of ours; reported like any refusal. */
class NameTakenError extends OwnRefusal {}

/**
 * A write that would go out without a resourceVersion: the API server takes a patch, a PUT or a
 * delete precondition without one as unconditional — a write decided from nothing in particular
 * (SPEC §2: "never an empty one"). Refused before any request, reported like any refusal: 428,
 * HTTP's "the server requires the request to be conditional".
 */
export class UnconditionalWriteError extends OwnRefusal {
  constructor(verb: string, name: string) {
    super(verb, name, 428, 'PreconditionRequired', `refused to write ${name} without a resourceVersion: the write would be unconditional`);
    this.name = 'UnconditionalWriteError';
  }
}

/** The resourceVersion a write is conditional on; never an empty one. */
function conditionalOn(verb: string, name: string, resourceVersion: string | undefined): string {
  if (!resourceVersion) throw new UnconditionalWriteError(verb, name);
  return resourceVersion;
}

/**
 * A NeoSet's status write (applyPlan): `status` replaces the stored one whole, if the NeoSet's
 * resourceVersion is still `resourceVersion` — else kube-apiserver answers 409 Conflict
 * (test/integration/status-write.test.ts).
 */
export function statusPatch(resourceVersion: string, status: NeoSetStatus): JsonPatchOp[] {
  return [
    { op: 'replace', path: '/metadata/resourceVersion', value: resourceVersion },
    { op: 'add', path: '/status', value: status },
  ];
}

/**
 * Applies the plan. Throws only an ApiError that redelivery can fix (transient: 5xx, 429, no
 * connection) — after `written` has been filled, so the caller can still log what was done.
 */
export async function applyPlan(client: KubeClient, snapshot: Snapshot, plan: Plan, opts: ApplyOptions = {}): Promise<ApplyResult> {
  const now = opts.now ?? (() => new Date());
  const { neoset } = snapshot;
  const ns = neoset.metadata.namespace ?? 'default';
  const written: string[] = [];
  const owner = ownerOf(neoset);
  const event = async (key: string, spec: EventSpec) => recordEvent(client, owner, key, spec, now(), opts.instance);
  const events = eventBatch(client, owner, now, opts.instance);
  const ctx = newCtx(events.add, now, owner, neoset, opts.sink);
  // The decision's own Events, held until a NeoSet write lands (ApplyOptions.neosetFromCache).
  const held = opts.neosetFromCache ? eventBatch(client, owner, now, opts.instance) : null;
  if (held) ctx.decisionEvent = held.add;
  let neosetWriteLost = false;
  let resourceVersion = neoset.metadata.resourceVersion;
  // Every status written records the lists it was decided from (snapshot-reader.ts): the next
  // decision lists not older than these.
  const stamp = (status: NeoSetStatus): NeoSetStatus => (snapshot.listed ? { ...status, observedResourceVersions: snapshot.listed } : status);
  // The status alone, replaced whole ("add" of a member that exists replaces it, RFC 6902), on the
  // condition that the NeoSet is still the one decided on: a patch that sets metadata.resourceVersion
  // is refused 409 Conflict by kube-apiserver when the stored one differs, as a PUT with it is. Not a
  // PUT of the NeoSet as read: its spec (a template of up to etcd's 1.5 MiB) sent back on every write
  // and parsed again from the answer, for nothing (SPEC §2.5, memory-bounded.test.ts). The answer is
  // read for its resourceVersion: its long strings are not made.
  const writeStatus = async (status: NeoSetStatus, what: string) => {
    const r = await client
      .request<{ metadata?: ObjectMeta }>('PATCH', paths.neosetStatus(ns, neoset.metadata.name), {
        patch: 'json',
        body: statusPatch(conditionalOn('PATCH', neoset.metadata.name, resourceVersion), stamp(status)),
        longStrings: POD_LONG_STRINGS,
      })
      .catch((err) => {
        if (err instanceof ApiError && err.isConflict) neosetWriteLost = true;
        throw err;
      });
    resourceVersion = r?.metadata?.resourceVersion ?? resourceVersion;
    written.push(what);
  };
  let statusWritten = false;
  let flushed: Promise<void> | undefined;
  // §4.12: what the written status made true, told by its writer only (a lost race wrote nothing):
  // sent to K_SINK, and mirrored as Events (keyed by the id: once) that kubectl describe and the dashboard show.
  const notify = () => {
    const told = statusWritten ? notifications(snapshot, plan) : [];
    if (told.length === 0) return undefined;
    return handledFromBirth(Promise.all([opts.notify?.(told), ...told.map((n) => event(n.id, notificationEvent(n)).catch(() => undefined))]));
  };
  const current = plan.status ?? neoset.status ?? {};
  let failing: Action | undefined;
  // The order of the writes is the core's (releases, the claim, the rest: actions.ts writeOrder).
  const { writes: ordered, claimAt: released } = writeOrder(plan);
  try {
    for (let i = 0; i < ordered.length; ) {
      if (i === released && plan.claim && plan.status) {
        await writeStatus(plan.status, 'claim');
        statusWritten = true;
      }
      // Writes to different pods that follow one another in the plan go out together (SPEC §2.0),
      // each pod's chain in its own order; anything else, one at a time, in plan order.
      const group = writeGroup(ordered, i, i < released ? released : ordered.length);
      // The first failure stops what has not started yet; what is in flight is awaited.
      const failed: { action?: Action; error?: unknown } = {};
      await mapBounded(group.chains, WRITE_PARALLELISM, async (chain) => {
        for (const action of chain) {
          if (failed.action) return;
          try {
            await applyAction(client, ns, action, ctx);
          } catch (error) {
            if (!failed.action) Object.assign(failed, { action, error });
            return;
          }
          if (action.kind !== 'recordEvent') written.push(action.kind);
        }
      });
      if (failed.action) {
        failing = failed.action;
        throw failed.error;
      }
      i = group.end;
    }
    failing = undefined;
    if (released === ordered.length && plan.claim && plan.status) {
      await writeStatus(plan.status, 'claim');
      statusWritten = true;
    }
    // A plan that went through clears an earlier refusal's condition.
    const writes = plan.actions.some((a) => a.kind !== 'recordEvent');
    const cleared = writes ? withoutFailure(current) : current;
    // The Events tell of the pod writes, all done: they go out with the status write, not after it.
    // Awaited only after the status write: handled from birth (SPEC §2.3), whatever flush does.
    flushed = handledFromBirth(events.flush());
    if ((!statusWritten && plan.status) || cleared !== current) {
      await writeStatus(cleared, 'status');
      statusWritten = true;
    }
    if (held) flushed = handledFromBirth(Promise.all([flushed, held.flush()]).then(() => undefined));
    const sent = notify();
    const tail = sent ? Promise.all([flushed, sent]).then(() => undefined) : flushed;
    if (opts.defer) opts.defer(tail);
    else await tail;
    return { outcome: 'applied', written, statusWritten };
  } catch (err) {
    // The Events of the writes that were made; the decision's own when a NeoSet write proved it fresh.
    await Promise.all([flushed, events.flush(), notify(), statusWritten ? held?.flush() : undefined]);
    if (!(err instanceof ApiError)) throw err;
    if (!(err instanceof NameTakenError) && (err.isConflict || (err.isNotFound && err.verb !== 'GET'))) {
      // 409: lost a race. 404 on a write: the object was deleted under us. Either way the snapshot
      // is stale; the change that made it stale is itself an event.
      return { outcome: 'conflict', written, statusWritten, ...(neosetWriteLost ? { neosetWriteLost } : {}) };
    }
    // Not a failure: no ReplicaFailure condition, no Warning Event (none could be created), no alert.
    if (err.isNamespaceTerminating) return { outcome: 'gone', written, statusWritten };
    if (err.isTransient) throw Object.assign(err, { written });
    // Best effort: the refusal is in the log line even when the report cannot be written.
    await reportFailure(neoset, failing, err, { event, now, current, writeStatus }).catch(() => undefined);
    return { outcome: 'failed', written, statusWritten, error: err };
  }
}

/** Pod writes of one plan in flight at once at most (SPEC §2.0 "concurrently, bounded"). */
export const WRITE_PARALLELISM = 8;

/**
 * The readiness function's writes (§2.0): pod writes decided from the Pod as read from the API
 * server, each conditional on its resourceVersion (or chained on the previous write's). No status,
 * no claim: they do not depend on the spec. Events go on `owner`, the pod's NeoSet. A lost race is a
 * conflict; a write that would be unconditional is refused before it is sent ('failed'); any other
 * refusal is thrown (the caller answers it as any failure).
 */
export async function applyPodWrites(client: KubeClient, owner: Owner, actions: Action[], opts: ApplyOptions = {}): Promise<ApplyResult> {
  const now = opts.now ?? (() => new Date());
  const events = eventBatch(client, owner, now, opts.instance);
  const ctx = newCtx(events.add, now, owner, null, opts.sink);
  ctx.facts = opts.facts;
  const written: string[] = [];
  try {
    for (const action of actions) {
      await applyAction(client, owner.namespace, action, ctx);
      if (action.kind !== 'recordEvent') written.push(action.kind);
    }
    await events.flush();
    return { outcome: 'applied', written, statusWritten: false };
  } catch (err) {
    await events.flush();
    if (err instanceof ApiError && (err.isConflict || (err.isNotFound && err.verb !== 'GET'))) return { outcome: 'conflict', written, statusWritten: false };
    // A fact that no longer holds (or never did: a forged event) is a lost race too. kube-apiserver
    // answers a failed test 422 with a message of no use ("the server rejected our request due to an
    // error in our request"), as it answers an invalid result: either way the caller reads the pod and
    // decides again, and a write that is invalid on the pod as read is refused and reported there.
    if (opts.facts && err instanceof ApiError && err.status === 422) return { outcome: 'conflict', written, statusWritten: false };
    if (err instanceof UnconditionalWriteError) return { outcome: 'failed', written, statusWritten: false, error: err };
    throw Object.assign(err as Error, { written });
  }
}

/** The writes made before a transient failure, carried on the error (ApplyResult.written). */
export function writtenBefore(err: unknown): string[] {
  return (err as { written?: string[] }).written ?? [];
}

interface Ctx {
  event: (key: string, spec: EventSpec) => Promise<void>;
  /** Where the decision's own Events (recordEvent) go, when not with the others (ApplyOptions.neosetFromCache). */
  decisionEvent?: (key: string, spec: EventSpec) => Promise<void>;
  now: () => Date;
  owner: Owner;
  /** The NeoSet itself, for adopting a name taken at create time; absent for pod-only writes. */
  neoset: NeoSet | null;
  /** The resourceVersion a write is conditional on: its own, or (chained) the one our previous write to that object returned. */
  rv: (ref: ObjectRef, verb?: string) => string;
  wrote: (ref: ObjectRef, result: Written) => void;
  sink?: LifecycleSink;
  /** ApplyOptions.facts: pod writes test these instead of carrying a resourceVersion. */
  facts?: PodFacts;
}

function newCtx(event: Ctx['event'], now: () => Date, owner: Owner, neoset: NeoSet | null, sink?: LifecycleSink): Ctx {
  const returned = new Map<string, string>();
  return {
    event,
    now,
    owner,
    neoset,
    sink,
    rv: (ref, verb = 'PATCH') => {
      // Never an empty resourceVersion: the API server would take the write as unconditional.
      if (!ref.chained) return conditionalOn(verb, ref.name, ref.resourceVersion);
      const rv = returned.get(ref.uid);
      if (!rv) throw new ApiError('PATCH', ref.name, 409, 'Conflict', `no earlier write to ${ref.name} in this plan to chain on`);
      return rv;
    },
    wrote: (ref, result) => {
      if (result?.metadata?.resourceVersion) returned.set(ref.uid, result.metadata.resourceVersion);
    },
  };
}

type Written = { metadata?: ObjectMeta } | undefined;

const keyOf = (kind: string, result: Written) => `${kind}/${result?.metadata?.uid}/${result?.metadata?.resourceVersion}`;

/**
 * A write's answer is read for its metadata only (Written: uid, resourceVersion): its long strings — a
 * created pod's or revision's template, with env values of up to a MiB — are cut from its bytes before
 * they are parsed, as the status write's are (SPEC §2.5). A GET (createOrAdopt's read of what holds a
 * name) is read whole.
 */
export function answeredForMetadata(client: KubeClient): KubeClient {
  return { request: (verb, path, opts) => client.request(verb, path, verb === 'GET' ? opts : { longStrings: POD_LONG_STRINGS, ...opts }) };
}

async function applyAction(writer: KubeClient, ns: string, action: Action, ctx: Ctx): Promise<void> {
  const client = answeredForMetadata(writer);
  const metaOf = (ref: ObjectRef) => ({ resourceVersion: ctx.rv(ref) });
  const preconditions = (ref: ObjectRef) => ({ kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: ref.uid, resourceVersion: ctx.rv(ref, 'DELETE') } });
  const patchPod = async (ref: ObjectRef, body: Record<string, unknown>, patch: 'merge' | 'strategic' = 'merge', path = paths.pod(ns, ref.name)) => {
    const r = await client.request<Written>('PATCH', path, { patch, body: { ...body, metadata: { ...metaOf(ref), ...(body.metadata as object) } } });
    ctx.wrote(ref, r);
    return r;
  };
  // The facts' tests first: the API server applies the rest only if every one holds (pod-facts.ts).
  const patchOnFacts = async (ref: ObjectRef, path: string, ops: JsonPatchOp[]) => {
    const r = await client.request<Written>('PATCH', path, { patch: 'json', body: [...(ctx.facts as PodFacts).tests, ...ops] });
    ctx.wrote(ref, r);
    return r;
  };
  // Only readiness's writes are made on facts; any other would go out without a condition.
  if (ctx.facts && action.kind !== 'setInPlaceReady' && action.kind !== 'finishInPlaceUpdate' && action.kind !== 'recordEvent') throw new UnconditionalWriteError('PATCH', action.kind);

  switch (action.kind) {
    case 'createRevision': {
      const r = await createOrAdopt(client, ctx, paths.revisions(ns), paths.revision(ns, action.revision.metadata.name), { apiVersion: 'apps/v1', kind: 'ControllerRevision', ...action.revision });
      return ctx.event(keyOf(action.kind, r), action.event);
    }
    case 'renumberRevision': {
      const r = await client.request<Written>('PATCH', paths.revision(ns, action.revision.name), {
        patch: 'merge',
        body: { metadata: metaOf(action.revision), revision: action.number },
      });
      return ctx.event(keyOf(action.kind, r), action.event);
    }
    case 'deleteRevision':
      await client.request('DELETE', paths.revision(ns, action.revision.name), { body: preconditions(action.revision) });
      return;
    case 'createPVC': {
      const r = await createOrAdopt(client, ctx, paths.pvcs(ns), paths.pvc(ns, action.pvc.metadata.name), { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...action.pvc });
      return ctx.event(keyOf(action.kind, r), action.event);
    }
    case 'setPVCOwners':
      await client.request<Written>('PATCH', paths.pvc(ns, action.pvc.name), {
        patch: 'merge',
        body: { metadata: { ...metaOf(action.pvc), ownerReferences: action.ownerReferences } },
      });
      return;
    case 'resizeClaim': {
      // Merge patch of the request alone, conditional on the claim as read: a claim changed since
      // (resized by hand, deleted and recreated) is decided again, never overwritten.
      const r = await client.request<Written>('PATCH', paths.pvc(ns, action.pvc.name), {
        patch: 'merge',
        body: { metadata: metaOf(action.pvc), spec: { resources: { requests: { storage: action.storage } } } },
      });
      return ctx.event(keyOf(action.kind, r), action.event);
    }
    case 'createPod': {
      const r = await createOrAdopt(client, ctx, paths.pods(ns), paths.pod(ns, action.pod.metadata.name), { apiVersion: 'v1', kind: 'Pod', ...action.pod });
      return ctx.event(keyOf(action.kind, r), action.event);
    }
    case 'deletePod': {
      await client.request('DELETE', paths.pod(ns, action.pod.name), { body: preconditions(action.pod) });
      return ctx.event(`${action.kind}/${action.pod.uid}`, action.event);
    }
    case 'adoptPod':
    case 'adoptRevision': {
      const path = action.kind === 'adoptPod' ? paths.pod(ns, action.object.name) : paths.revision(ns, action.object.name);
      const r = await client.request<Written>('PATCH', path, {
        patch: 'merge',
        body: { metadata: { ...metaOf(action.object), ownerReferences: action.ownerReferences } },
      });
      return ctx.event(keyOf(action.kind, r), action.event);
    }
    case 'markDraining': {
      // One pods/status write (metadata may change there, spec may not): state and gate False at once.
      const r = await patchPod(
        action.pod,
        { metadata: { annotations: { [ANNOTATION_INPLACE_STATE]: JSON.stringify(action.state) } }, status: { conditions: [gateCondition(action.gate)] } },
        'strategic',
        paths.podStatus(ns, action.pod.name),
      );
      return ctx.event(keyOf(action.kind, r), action.event);
    }
    case 'restartDeadline': {
      const r = await patchPod(action.pod, { metadata: { annotations: { [ANNOTATION_INPLACE_STATE]: JSON.stringify(action.state) } } });
      return ctx.event(keyOf(action.kind, r), action.event);
    }
    case 'releaseClaim':
      await patchPod(action.pod, { metadata: { annotations: { [ANNOTATION_CLAIM_RELEASED]: rfc3339(ctx.now().getTime()) } } });
      return;
    case 'setInPlaceReady':
      if (ctx.facts) return void (await patchOnFacts(action.pod, paths.podStatus(ns, action.pod.name), [gateOp(ctx.facts.view, gateCondition(action))]));
      // pods/status with a strategic merge patch: conditions merge by type (SPEC §8).
      await patchPod(action.pod, { status: { conditions: [gateCondition(action)] } }, 'strategic', paths.podStatus(ns, action.pod.name));
      return;
    case 'patchImages': {
      const r = await patchPod(
        action.pod,
        {
          metadata: {
            // Template label/annotation changes travel with the images (null removes one).
            labels: { ...action.labels, [LABEL_REVISION_HASH]: action.revision },
            annotations: { ...action.annotations, [ANNOTATION_INPLACE_STATE]: JSON.stringify(action.state) },
          },
          spec: { containers: Object.entries(action.images).map(([name, image]) => ({ name, image })) },
        },
        'strategic',
      );
      return action.event ? ctx.event(keyOf(action.kind, r), action.event) : undefined;
    }
    case 'resizePod': {
      const containers = Object.entries(action.containers).map(([name, t]) => ({ name, ...t }));
      try {
        await patchPod(action.pod, { spec: { containers } }, 'strategic', paths.podResize(ns, action.pod.name));
      } catch (err) {
        // 403 from kube-apiserver's PodResizeValidator (beyond the node's allocatable; not a Linux
        // node): no retry can change that. Recorded on the pod as the decision said (§4.9), so that
        // every later decision — and the one this write's event brings — sees the rollout Failed.
        if (!(err instanceof ApiError) || !isResizeRefusal(err)) throw err;
        const refused = { ...action.refused, resizeRefused: err.serverMessage };
        const pod = { ...action.pod, resourceVersion: ctx.rv(action.pod), chained: false };
        await patchPod(pod, { metadata: { annotations: { [ANNOTATION_INPLACE_STATE]: JSON.stringify(refused) } } });
      }
      return;
    }
    case 'finishInPlaceUpdate': {
      const annotations = { [ANNOTATION_INPLACE_STATE]: null };
      // With a gate, one pods/status write (metadata may change there); without, the pod's.
      const path = action.gate ? paths.podStatus(ns, action.pod.name) : paths.pod(ns, action.pod.name);
      const gate = action.gate && gateCondition(action.gate);
      const r = ctx.facts
        ? await patchOnFacts(action.pod, path, [removeStateOp, ...(gate ? [gateOp(ctx.facts.view, gate)] : [])])
        : await patchPod(action.pod, { metadata: { annotations }, ...(gate ? { status: { conditions: [gate] } } : {}) }, gate ? 'strategic' : 'merge', path);
      // Observed by the one writer whose conditional write succeeded: once per update.
      // An aborted drain changed no image: it is not an update duration.
      if (!action.aborted) inPlaceUpdateDuration.observe({ namespace: ns, neoset: ctx.owner.name }, action.durationSeconds);
      return action.event ? ctx.event(keyOf(action.kind, r), action.event) : undefined;
    }
    case 'setLifecycle': {
      const r = await patchPod(action.pod, { metadata: { labels: { [LABEL_LIFECYCLE_STATE]: action.state }, annotations: { [ANNOTATION_LIFECYCLE_SINCE]: action.since } } });
      // Sent once the state is on the pod, in the order of the pod's writes (SPEC §4.10).
      // The pod's identity and state, never the Pod: the sink is shared (SPEC §2.5, lifecycle-sink.ts).
      const handlers = [ctx.neoset?.spec.lifecycle?.preUpdate, ctx.neoset?.spec.lifecycle?.postUpdate].flatMap((h) => Object.keys(h?.labelsHandler ?? {}));
      if (ctx.sink && r) await ctx.sink({ state: action.state, namespace: ns, neoset: ctx.owner.name, pod: lifecyclePod(r, ns, handlers) });
      return;
    }
    case 'recordEvent':
      return (ctx.decisionEvent ?? ctx.event)(action.key, action.event);
  }
}

/**
 * The refusals of kube-apiserver's PodResizeValidator admission plugin (Kubernetes 1.37,
 * plugin/pkg/admission/podresize): 403 with these messages. Any other 403 (RBAC without pods/resize)
 * is an ordinary refusal, reported as such.
 */
function isResizeRefusal(err: ApiError): boolean {
  return err.status === 403 && /node didn't have enough allocatable resources|pod resize is only supported on linux nodes/.test(err.message);
}

/**
 * POST; on AlreadyExists, the object under that name is read and the core says what to do with it
 * (adoption.ts nameTaken): a race (a conflict), used as it is, patched to be ours (conditional on
 * the resourceVersion read), or refused, reported with the API server's words (NameTakenError).
 */
async function createOrAdopt(client: KubeClient, ctx: Ctx, collection: string, path: string, body: Created): Promise<Written> {
  try {
    return await client.request<Written>('POST', collection, { body });
  } catch (err) {
    const neoset = ctx.neoset;
    if (!(err instanceof ApiError) || err.reason !== 'AlreadyExists' || !neoset) throw err;
    const existing = await client.request<Created>('GET', path);
    const taken = nameTaken(neoset, body, existing);
    switch (taken.verdict) {
      case 'race':
        throw err;
      case 'use':
        return existing;
      case 'patch':
        return client.request<Written>('PATCH', path, {
          patch: 'merge',
          body: { metadata: { resourceVersion: conditionalOn('PATCH', existing.metadata.name, existing.metadata.resourceVersion), ...taken.metadata } },
        });
      case 'refuse':
        throw new NameTakenError(err.verb, err.path, err.status, err.reason, taken.message);
    }
  }
}
