// What the page shows, computed from the watched objects: a pure function of the store's contents,
// so the page is dumb (it draws) and every rule about what a pod's state means is tested here.
import { NOTIFICATION_TYPE_PREFIX } from '../../../shared/api/notification.ts';
import { ANNOTATION_CHANGE_CAUSE, ANNOTATION_INPLACE_STATE, LABEL_LIFECYCLE_STATE, LABEL_REVISION_HASH } from '../../../shared/api/names.ts';
import type { NeoSet, PodTemplateSpec } from '../../../shared/api/neoset.ts';
import { canaryPosition } from '../../../shared/core/canary/position.ts';
import { isReady, parseInPlaceState, parseOrdinal } from '../../../shared/core/index.ts';
import { controlOf } from '../../../shared/core/ownership.ts';
import type { ObjectMeta, Pod } from '../../../shared/core/objects.ts';
import { previousRevision } from '../../../shared/core/revisions/rollback.ts';
import { imagesOf } from '../revisions.ts';
import { eventTime } from './store.ts';
import { ordinalsInRange } from '../../../shared/core/ordinals.ts';
import type { Condition, EventObject, Meta, NeoSetObject, PodObject, RevisionObject } from './wire.ts';

const RECENT_EVENTS = 25;

export interface NeoSetSummary {
  namespace: string;
  name: string;
  phase: string;
  replicas: number;
  ready: number;
  updated: number;
  currentImage: string;
  targetImage: string;
  /** "step 2 of 5", once the automated canary (SPEC §4.11) reports one. */
  canaryStep?: string;
}

export interface PodView {
  name: string;
  ordinal: number;
  /** ControllerRevision name (the controller-revision-hash label). */
  revision?: string;
  revisionNumber?: number;
  /** Index into the page's revision palette; undefined for a revision not (or no longer) in history. */
  colour?: number;
  image: string;
  podPhase: string;
  ready: boolean;
  /** The in-place update phase (§4.4), while one is in flight. */
  inPlace?: 'Draining' | 'Updating';
  hook?: string;
  restarts: number;
  /** A container's waiting reason, e.g. CrashLoopBackOff. */
  waiting?: string;
  deleting: boolean;
  /** In status.currentUpdatePods. */
  updating: boolean;
}

export interface RevisionView {
  revision: number;
  name: string;
  images: string;
  changeCause?: string;
  current: boolean;
  update: boolean;
  colour: number;
  /** What `rollout undo` without --to-revision goes back to. */
  undoDefault: boolean;
}

export interface EventView {
  time: string;
  type: string;
  reason: string;
  object: string;
  message: string;
  count: number;
  /** §4.12: a rollout notification mirrored as an Event (reason io.neo.neoset.rollout.<kind>): its kind. */
  notification?: string;
}

export interface NeoSetDetail extends NeoSetSummary {
  partition: number;
  /** §4.12: the ordinal at position partition (start and reserveOrdinals counted), before which the partition line is drawn; null past the last. */
  partitionOrdinal: number | null;
  paused: boolean;
  maxUnavailable: string;
  strategy: string;
  currentRevision?: string;
  updateRevision?: string;
  pods: PodView[];
  revisions: RevisionView[];
  conditions: Condition[];
  events: EventView[];
}

export interface Objects {
  neosets: NeoSetObject[];
  pods: PodObject[];
  revisions: RevisionObject[];
  events: EventObject[];
}

const key = (m: Meta) => `${m.namespace ?? ''}/${m.name}`;

export function summaries(neosets: NeoSetObject[]): NeoSetSummary[] {
  return neosets.map(summary).sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
}

function summary(n: NeoSetObject): NeoSetSummary {
  const status = n.status ?? {};
  return {
    namespace: n.metadata.namespace ?? '',
    name: n.metadata.name,
    phase: status.phase ?? '',
    replicas: n.spec?.replicas ?? 0,
    ready: status.readyReplicas ?? 0,
    updated: status.updatedReplicas ?? 0,
    currentImage: status.currentImage ?? '',
    targetImage: status.targetImage ?? '',
    canaryStep: canaryStep(n),
  };
}

/** The step status.canary last reported, whether or not the steps run now (SPEC §4.11). */
function canaryStep(n: NeoSetObject): string | undefined {
  const stepIndex = n.status?.canary?.stepIndex;
  const reported = typeof stepIndex === 'number' ? { stepIndex, revision: n.status?.canary?.revision } : undefined;
  const at = canaryPosition(n.spec?.updateStrategy?.canary?.steps?.length ?? 0, reported, n.status?.updateRevision);
  return at ? `step ${at.index + 1} of ${at.count}` : undefined;
}

/**
 * This NeoSet's, by the controller's own rule (§4.1, controlOf): its controller reference (not a
 * namesake's, after a re-create), or an orphan its selector adopts. The store holds every namespace.
 */
const ownedBy = (n: NeoSetObject) => (m: Meta) =>
  m.namespace === n.metadata.namespace && n.spec?.selector !== undefined && controlOf(n as NeoSet, { metadata: m as ObjectMeta }) !== 'other';

function partitionOrdinal(n: NeoSetObject): number | null {
  const spec = n.spec ?? {};
  const partition = spec.updateStrategy?.partition ?? 0;
  // Only the first partition + 1 ordinals are needed (and no more than a page could show).
  const replicas = Math.min(spec.replicas ?? 0, partition + 1, 100_000);
  const ordinals = ordinalsInRange({ replicas, ordinals: { start: spec.ordinals?.start ?? 0 }, reserveOrdinals: spec.reserveOrdinals });
  return ordinals[partition] ?? null;
}

export function detail(objects: Objects, namespace: string, name: string): NeoSetDetail | undefined {
  const n = objects.neosets.find((x) => key(x.metadata) === `${namespace}/${name}`);
  if (!n) return undefined;
  const owned = ownedBy(n);
  const revisions = objects.revisions.filter((r) => owned(r.metadata));
  const colours = colourByRevision(revisions);
  const strategy = n.spec?.updateStrategy ?? {};
  return {
    ...summary(n),
    partition: strategy.partition ?? 0,
    partitionOrdinal: partitionOrdinal(n),
    paused: strategy.pause ?? false,
    maxUnavailable: String(strategy.maxUnavailable ?? 1),
    strategy: strategy.type ?? '',
    currentRevision: n.status?.currentRevision,
    updateRevision: n.status?.updateRevision,
    pods: objects.pods
      .filter((p) => owned(p.metadata))
      .map((p) => podView(p, n, revisions, colours))
      .sort((a, b) => a.ordinal - b.ordinal),
    revisions: historyView(n, revisions, colours),
    conditions: n.status?.conditions ?? [],
    events: eventsOf(objects.events, n),
  };
}

/** Colours follow a revision's creation, not its number: a rollback renumbers a revision but keeps its colour. */
function colourByRevision(revisions: RevisionObject[]): Map<string, number> {
  const byAge = [...revisions].sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || a.revision - b.revision);
  return new Map(byAge.map((r, i) => [r.metadata.name, i]));
}

function podView(p: PodObject, n: NeoSetObject, revisions: RevisionObject[], colours: Map<string, number>): PodView {
  const revision = p.metadata.labels?.[LABEL_REVISION_HASH];
  const statuses = p.status?.containerStatuses ?? [];
  return {
    name: p.metadata.name,
    ordinal: parseOrdinal(n.metadata.name, p.metadata.name) ?? -1,
    revision,
    revisionNumber: revisions.find((r) => r.metadata.name === revision)?.revision,
    colour: revision === undefined ? undefined : colours.get(revision),
    image: p.spec?.containers?.[0]?.image ?? '',
    podPhase: p.status?.phase ?? 'Pending',
    // The wire pod may lack a spec; Ready is read from its status only.
    ready: isReady(p as Pod),
    inPlace: parseInPlaceState(p.metadata.annotations?.[ANNOTATION_INPLACE_STATE])?.phase,
    // SPEC §4.10: the update-hook state a pod of a NeoSet with spec.lifecycle carries.
    hook: p.metadata.labels?.[LABEL_LIFECYCLE_STATE],
    restarts: statuses.reduce((sum, c) => sum + (c.restartCount ?? 0), 0),
    waiting: statuses.map((c) => c.state?.waiting?.reason).find(Boolean),
    deleting: p.metadata.deletionTimestamp !== undefined,
    updating: n.status?.currentUpdatePods?.includes(p.metadata.name) ?? false,
  };
}

function historyView(n: NeoSetObject, revisions: RevisionObject[], colours: Map<string, number>): RevisionView[] {
  // The same choice as `rollout undo` without --to-revision (revisions.ts), over the wire objects.
  const previous = n.spec?.template === undefined ? undefined : previousRevision(n as unknown as NeoSet, revisions as never);
  return [...revisions]
    .sort((a, b) => b.revision - a.revision)
    .map((r) => ({
      revision: r.revision,
      name: r.metadata.name,
      images: r.data?.spec?.template ? imagesOf(r.data.spec.template as PodTemplateSpec) : '',
      changeCause: r.metadata.annotations?.[ANNOTATION_CHANGE_CAUSE],
      current: n.status?.currentRevision === r.metadata.name,
      update: n.status?.updateRevision === r.metadata.name,
      colour: colours.get(r.metadata.name) ?? 0,
      undoDefault: previous?.metadata.name === r.metadata.name,
    }));
}

/** Events about the NeoSet and its pods (by name: a deleted pod's Events still belong to the story). */
function eventsOf(events: EventObject[], n: NeoSetObject): EventView[] {
  return events
    .filter((e) => {
      const o = e.involvedObject;
      if (!o || (o.namespace ?? e.metadata.namespace) !== n.metadata.namespace) return false;
      return o.kind === 'NeoSet' ? o.name === n.metadata.name : parseOrdinal(n.metadata.name, o.name ?? '') !== null;
    })
    .slice(0, RECENT_EVENTS)
    .map((e) => ({
      time: eventTime(e),
      type: e.type ?? 'Normal',
      reason: e.reason ?? '',
      object: `${e.involvedObject?.kind?.toLowerCase()}/${e.involvedObject?.name}`,
      message: e.message ?? '',
      count: e.count ?? 1,
      ...(e.reason?.startsWith(NOTIFICATION_TYPE_PREFIX) ? { notification: e.reason.slice(NOTIFICATION_TYPE_PREFIX.length) } : {}),
    }));
}
