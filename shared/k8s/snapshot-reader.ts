// Reads the Snapshot that decide() needs (§2.0): the NeoSet and its children — pods and revisions
// carrying its label, and the claims (PVCs) only when the spec has claim templates — each list served
// from the API server's watch cache as it is at least as new as the list the NeoSet's status was
// decided from (status.observedResourceVersions, recorded by the applier with every status write; for
// pods, also at least as new as the Pods of the events being answered: what an event told of is
// decided on).
//
// This keeps what SPEC §2.0's order (children first, the NeoSet last) is for, without its cost. A
// claim is written to the NeoSet before the pod write it covers, and leaves the status only in a
// status write decided from a list that showed that pod write (a dead claim: observed.ts), or after a
// pod write that makes the claimed write fail (a release). So a claim missing from the NeoSet we read
// was either written after our read — then our own claim or status write, conditional on that
// resourceVersion, loses (409) — or its pod write is in a list not older than the recorded one: ours.
// And a status is never decided from older lists than the one it replaces. A list with no
// resourceVersion would instead wait until the watch cache has caught up with etcd's newest revision
// (a consistent read), and one bounded by the NeoSet's own resourceVersion — another resource's
// revision — for the cache's next progress notification: mid-rollout on the dev stack, 35 ms a read
// either way, against 9 ms (bench/rollout.ts).
//
// The NeoSet itself: readSnapshot reads it from etcd (a GET without a resourceVersion: the newest).
// readSnapshotCached — the reconcile function's — takes it from the watch cache as well (issue 24: a
// quorum GET was the slowest of the three reads), and the same argument covers it: every write a
// decision makes that depends on the spec or the status goes out after its claim or status write,
// conditional on the resourceVersion read (shared/core/actions.ts `claimed`), so a decision on a
// NeoSet older than etcd's writes nothing of it but that one refused write. What the cache lacks is
// read from etcd: a NeoSet it does not hold yet (just created), or one older than an event showed; and
// a NeoSet event that shows no version (Reference mode) has its run read from etcd (readSnapshot:
// reconcile-dispatch.ts `neosetFromEtcd`), so that an acknowledged event was decided on what it told of.
// The caller decides again from etcd when the cached NeoSet's write loses (shared/k8s/reconcile.ts),
// and holds the decision's own Events until that write lands (apply.ts `neosetFromCache`).
//
import { z } from 'zod';
import { LABEL_NEOSET_NAME } from '../api/names.ts';
import { NeoSet, RECORDED_VERSION_PATTERN } from '../api/neoset.ts';
import type { ControllerRevision, PersistentVolumeClaim, Pod } from '../core/objects.ts';
import type { ListedVersions, Snapshot } from '../core/snapshot.ts';
import { ApiError, type KubeClient, type RequestOptions } from './client.ts';
import { paths } from './paths.ts';
import { floorFrom, isNewer, newest } from './resource-version.ts';
import { handledFromBirth } from '../handled.ts';
import { POD_LONG_STRINGS, trimPod } from './pod-trim.ts';
import type { ByteBudget } from './read-budget.ts';

/** A NeoSet stored in the API server that does not satisfy the schema (admission was bypassed). */
export class InvalidNeoSetError extends Error {
  constructor(namespace: string, name: string, error: z.ZodError) {
    super(`NeoSet ${namespace}/${name} is invalid: ${z.prettifyError(error).replaceAll('\n', '; ')}`);
    this.name = 'InvalidNeoSetError';
  }
}

interface List<T> {
  metadata?: { resourceVersion?: string };
  items: T[];
}

/**
 * The snapshot of one NeoSet, or null when it does not exist. `seen`: the newest resourceVersion of
 * the Pods in the events this read answers — the pod list is not older than that either, so the change
 * an event tells of is in the decision it leads to, whichever API server the list comes from.
 *
 * The pods and revisions are listed while the NeoSet is read, from the watch cache as it is, and kept
 * when they turn out not older than the NeoSet's record (compared as KEP-5504 lets a client compare
 * resourceVersions of one resource); else listed again at the record. With one API server that never
 * happens: its cache only moves forward.
 *
 * `seen` comes from an event, which anyone may forge: it is never waited for. A pod list older than
 * `seen` is replaced by a consistent list (newer than anything etcd had when it was asked, so not
 * older than a genuine `seen`), never by a list asked not to be older than `seen` — an API server
 * waits ~3 s for a version it has not reached before its 504, and a forged `999999999999` is one it
 * never reaches. A genuine `seen` rarely costs that list: one API server's cache already holds every
 * version it has sent in an event; only a second API server behind the first does not.
 */
export async function readSnapshot(client: KubeClient, namespace: string, name: string, seen?: string, opts: ReadOptions = {}): Promise<Snapshot | null> {
  return (await read(client, namespace, name, seen, null, opts)).snapshot;
}

/**
 * `budget`: charged with every answer's bytes as kept (read-budget.ts: a snapshot past its run's limit
 * ends the read with TooLargeToDecide). The pods are kept trimmed to what decide() reads (pod-trim.ts)
 * as their list streams in, whether or not there is a budget.
 */
export interface ReadOptions {
  budget?: ByteBudget;
}

/** How a snapshot's NeoSet was read: from the watch cache (`cached`) or from etcd. */
export interface CachedSnapshot {
  snapshot: Snapshot | null;
  /** The NeoSet came from the watch cache: possibly older than etcd's (see the top of this file). */
  neosetFromCache: boolean;
}

/**
 * readSnapshot with the NeoSet from the watch cache (see the top of this file). `neosetSeen`: the
 * newest resourceVersion of the NeoSet in the events this read answers; a cached NeoSet older than it
 * is read from etcd instead (compared, never asked for: an event's version may be forged).
 */
export function readSnapshotCached(client: KubeClient, namespace: string, name: string, seen?: string, neosetSeen?: string, opts: ReadOptions = {}): Promise<CachedSnapshot> {
  return read(client, namespace, name, seen, { seen: neosetSeen }, opts);
}

async function read(client: KubeClient, namespace: string, name: string, seen: string | undefined, cached: { seen?: string } | null, { budget }: ReadOptions): Promise<CachedSnapshot> {
  const labelSelector = `${LABEL_NEOSET_NAME}=${name}`;
  const listNotOlderThan = <T>(path: string, selector: string, version: string | undefined, pods = false) => listOf<T>(client, path, selector, version, pods ? { withoutManagedFields: true, trim: trimPod, longStrings: POD_LONG_STRINGS, budget } : { budget });
  // Started before the NeoSet GET and awaited after it: handled from birth, or a list failing while the
  // GET is in flight (an API server's 500) would be an unhandled rejection, which ends a Node process.
  const early = {
    pods: handledFromBirth(listNotOlderThan<Pod>(paths.pods(namespace), labelSelector, ANY, true)),
    controllerrevisions: handledFromBirth(listNotOlderThan<ControllerRevision>(paths.revisions(namespace), labelSelector, ANY)),
  };
  const get = (query?: { resourceVersion: string }) =>
    client.request<{ metadata?: { resourceVersion?: unknown } }>('GET', paths.neoset(namespace, name), query ? { query, budget } : { budget }).catch((err) => {
      if (err instanceof ApiError && err.isNotFound) return null;
      throw err;
    });
  let raw = await get(cached ? { resourceVersion: ANY } : undefined);
  let neosetFromCache = cached !== null;
  if (cached && !fresh(raw, cached.seen)) {
    raw = await get();
    neosetFromCache = false;
  }
  if (raw === null) return { snapshot: null, neosetFromCache };
  const parsed = NeoSet.safeParse(raw);
  if (!parsed.success) throw new InvalidNeoSetError(namespace, name, parsed.error);
  const neoset = parsed.data;
  // What the last status was decided from; a status written before there was such a record, or a
  // record that cannot be genuine (written by hand: resource-version.ts floorFrom): the NeoSet's own
  // resourceVersion, which is newer still (one etcd, one revision counter).
  const recorded = neoset.status?.observedResourceVersions ?? {};
  const atLeast = async <T>(resource: keyof ListedVersions, path: string, started: Promise<List<T>> | null, also?: string): Promise<List<T>> => {
    const floor = floorFrom(recorded[resource], neoset.metadata.resourceVersion);
    const pods = resource === 'pods';
    if (started) {
      const list = await started;
      const version = list.metadata?.resourceVersion;
      // The cache has not shown what the event told of (or cannot say): ask etcd's present, not `also`.
      if (also !== undefined && (version === undefined || isNewer(also, version) !== false)) return listNotOlderThan<T>(path, labelSelector, undefined, pods);
      if (floor !== undefined && version !== undefined && isNewer(floor, version) === false) return list;
    }
    // Here `also` is not newer than a list this API server served: a version that exists, safe to ask.
    return listNotOlderThan<T>(path, labelSelector, floor === undefined ? also : also === undefined ? floor : newest(also, floor), pods);
  };
  // PVCs outlive their owner on Retain, so they are matched by label (given by name on AlreadyExists, apply.ts).
  const [pods, revisions, pvcs] = await Promise.all([
    atLeast<Pod>('pods', paths.pods(namespace), early.pods, seen),
    atLeast<ControllerRevision>('controllerrevisions', paths.revisions(namespace), early.controllerrevisions),
    neoset.spec.volumeClaimTemplates.length === 0 ? ({ items: [] } as List<PersistentVolumeClaim>) : atLeast<PersistentVolumeClaim>('persistentvolumeclaims', paths.pvcs(namespace), null),
  ]);
  const listed: ListedVersions = {};
  for (const [resource, list] of [['pods', pods], ['controllerrevisions', revisions], ['persistentvolumeclaims', pvcs]] as const) {
    // Only what the CRD lets a status hold (RECORDED_VERSION_PATTERN): a version no write could record is no floor to keep.
    const version = list.metadata?.resourceVersion;
    if (version !== undefined && RECORDED_VERSION.test(version)) listed[resource] = version;
  }
  return { snapshot: { neoset, pods: pods.items, revisions: revisions.items, pvcs: pvcs.items, listed }, neosetFromCache };
}

/**
 * Whether a NeoSet from the watch cache will do: held there (a NeoSet created a moment ago may not be
 * yet), and not older than `seen` (an event's; a version that cannot be compared is not trusted).
 */
function fresh(raw: { metadata?: { resourceVersion?: unknown } } | null, seen: string | undefined): boolean {
  if (raw === null) return false;
  if (seen === undefined) return true;
  const version = raw.metadata?.resourceVersion;
  return typeof version === 'string' && isNewer(seen, version) === false;
}

const RECORDED_VERSION = new RegExp(RECORDED_VERSION_PATTERN);

/** resourceVersion "0": whatever the watch cache has, at once. */
const ANY = '0';

/**
 * A list as the API server has it at `version` or later (see the top of this file). Without a version,
 * or when the API server refuses it — it has not reached it (504 after its 3 s wait: an etcd restored
 * from a backup, whose revisions went back), cannot read it (400), has compacted it away (410) or
 * fails on it (500) — a consistent read: newer still. A floor is a hint (SPEC §2.5): no answer to it
 * may stop the read. Pods are listed
 * `withoutManagedFields` (client.ts) and trimmed (pod-trim.ts): nothing decided reads what is left
 * out, and the applier writes pods by patch, never by a PUT of what was read.
 */
async function listOf<T>(client: KubeClient, path: string, labelSelector: string, version: string | undefined, opts: Pick<RequestOptions, 'withoutManagedFields' | 'trim' | 'longStrings' | 'budget'>): Promise<List<T>> {
  const consistent = () => client.request<List<T>>('GET', path, { query: { labelSelector }, ...opts });
  if (version === undefined) return consistent();
  return client.request<List<T>>('GET', path, { query: { labelSelector, resourceVersion: version, resourceVersionMatch: 'NotOlderThan' }, ...opts }).catch((err) => {
    if (err instanceof ApiError && (err.status === 504 || (version !== ANY && FLOOR_REFUSED.has(err.status)))) return consistent();
    throw err;
  });
}

/** The API server's refusals of a floor (a version, not "0") that a consistent read may still serve; 504 besides. */
const FLOOR_REFUSED = new Set([400, 410, 500]);
