// Claims that grow (SPEC §4.12; OpenKruise volumeClaimUpdateStrategy OnPodRollingUpdate): a claim
// template whose storage was raised (admission refuses a shrink and any other change) makes the
// existing PVCs of the pods in range "behind" — they request less than the template. Each is patched
// to the template's request, and the pod counts as in its update (unavailable for the budget, not
// updated in the status) until every one of its claims reports the request as status.capacity. The
// PVC is the only memory: spec.resources.requests says what was asked, status.capacity what the
// volume has — no annotation is needed, and a crash between two writes is picked up from them.
//
// When: the rollout's batches and budget, as a pod update — positions >= partition (the canary
// steps' partition included), highest ordinal first, not while paused (nor under OnDelete), not
// while the rollout is Failed, and within maxUnavailable: a pod that is available takes a slot; one already unavailable
// (missing, not Ready, mid-update) adds nothing. Kruise resizes a pod's claims as part of its
// rolling update of that pod, so a storage-only change goes nowhere there until the pod template
// changes too; NeoSet grows claims on their own (a storage-only change rolls out by itself: growing
// a volume needs no pod restart). Under OnDelete nothing grows, as nothing of a rollout starts (and
// Kruise's rolling update, which resizes, does not run): the user deletes pods, or patches claims.
//
// What the resize machinery says is surfaced (the PersistentVolumeClaim conditions and
// allocatedResourceStatuses of KEP-1790, RecoverVolumeExpansionFailure): FileSystemResizePending
// (the volume grew, the kubelet grows the file system) in the ClaimsResized condition and an Event;
// ControllerResizeError / NodeResizeError, or an *Infeasible allocatedResourceStatus, on a claim
// still short of its request fails the rollout (reason VolumeResizeFailed, naming the claim and the
// cause). A claim that is not Bound cannot be resized (the API server allows request changes on
// bound claims only): it waits, behind, until it is.
import type { PersistentVolumeClaim } from '../objects.ts';
import type { Action, PodStep } from '../plan.ts';
import { objectRef, podName, volumeClaimName } from '../pods/identity.ts';
import { milli } from '../resize/resources.ts';
import type { Rollout } from '../target.ts';
import { countsUnavailable, resolveMaxUnavailable, unavailableInRange } from './budget.ts';

/**
 * Where one claim of a pod in range stands: resizing (bound, requesting more than its capacity —
 * whatever the template says), else behind (bound, requesting less than the template), unbound
 * (requesting less, not bound yet), done.
 */
export type ClaimStanding = 'done' | 'behind' | 'unbound' | 'resizing';

export interface ClaimFacts {
  name: string;
  pod: string;
  ordinal: number;
  standing: ClaimStanding;
  /** It requests less than the template: a patch is due (also while it resizes toward a smaller request). */
  short: boolean;
  /** The template's storage request (as written). */
  wanted: string;
  requested: string | undefined;
  capacity: string | undefined;
  /** A PVC condition of the resize that is True (FileSystemResizePending, Resizing, ...), for the status. */
  condition: { type: string; message: string } | null;
  /** Why the resize failed (a *ResizeError condition, an *Infeasible status), while the claim is short of its request. */
  failed: string | null;
}

export interface ClaimGrowth {
  /** The claims of the pods in range whose template requests storage, lowest ordinal first. */
  claims: ClaimFacts[];
  /** Pods with a claim being resized, this decision's patches included: in their update (budget, status). */
  resizing: Set<string>;
  /** Pods with a claim that is not done: not updated (§4.12 "a pod is updated only when its claims report the capacity"). */
  notDone: Set<string>;
  /** resizeClaim patches, highest ordinal first. */
  patches: Action[];
  /** The Events of what the resize machinery reports (recordEvent). */
  events: Action[];
  /** The first failed resize: the rollout is Failed for it. */
  failure: NonNullable<PodStep['failure']> | null;
  /** A claim of an ordinal >= partition is not done: the rollout has work left. */
  unfinished: boolean;
  /**
   * When to look again while a claim resizes: a PVC's status sends no event (knative/eventing.yaml
   * watches NeoSets and pods), and the resync tick is a minute away. Null when none resizes.
   */
  wakeAt: number | null;
}

/** How often a decision looks at claims that resize: short enough for a batch to follow promptly, a few list reads a minute. */
export const RESIZE_RECHECK_MS = 5000;

const ERROR_CONDITIONS = ['ControllerResizeError', 'NodeResizeError'];
/** Conditions worth showing, in the order the resize goes through them. */
const SHOWN_CONDITIONS = ['ControllerResizeError', 'NodeResizeError', 'FileSystemResizePending', 'Resizing'];

export function claimGrowth(o: Rollout, pvcs: Map<string, PersistentVolumeClaim>, failed: boolean): ClaimGrowth {
  const claims = readClaims(o, pvcs);
  const resizing = new Set(claims.filter((c) => c.standing === 'resizing').map((c) => c.pod));
  const notDone = new Set(claims.filter((c) => c.standing !== 'done').map((c) => c.pod));
  const events: Action[] = [];
  let failure: ClaimGrowth['failure'] = null;
  for (const c of claims) {
    if (c.failed && !failure) {
      failure = {
        reason: 'VolumeResizeFailed',
        message: `claim ${c.name} (pod ${c.pod}): resize to ${c.requested} failed: ${c.failed}`,
        key: `volume-resize-failed/${c.name}/${c.requested}`,
      };
    }
    if (c.condition?.type === 'FileSystemResizePending') {
      events.push({
        kind: 'recordEvent',
        key: `file-system-resize-pending/${c.name}/${c.requested}`,
        event: { type: 'Normal', reason: 'FileSystemResizePending', message: `claim ${c.name} (pod ${c.pod}): the volume grew to ${c.requested}, the kubelet grows its file system${c.condition.message ? ` (${c.condition.message})` : ''}` },
      });
    }
  }
  const patches = failed || failure ? [] : patchesWithinBudget(o, claims, resizing, pvcs);
  for (const c of patches) resizing.add(c.pod);
  // The status is written before the patches (§2.0 claim before act): it shows them as resizing.
  const patched = new Set(patches);
  return {
    claims: claims.map((c) => (patched.has(c) ? { ...c, standing: 'resizing' as const, short: false, requested: c.wanted } : c)),
    resizing,
    notDone,
    patches: patches.map((c) => resizeClaim(o, c, pvcs.get(c.name)!)),
    events,
    failure,
    unfinished: claims.some((c) => c.standing !== 'done' && o.positions.get(c.ordinal)! >= o.partition),
    wakeAt: resizing.size > 0 ? o.nowMs + RESIZE_RECHECK_MS : null,
  };
}

/**
 * The behind, bound claims to patch now: positions >= partition, highest first, not while paused or
 * under OnDelete; a pod that is available takes a slot of maxUnavailable (its claims are all patched
 * together), one already counted unavailable takes none; nothing while the budget is spent.
 */
function patchesWithinBudget(o: Rollout, claims: ClaimFacts[], resizing: Set<string>, pvcs: Map<string, PersistentVolumeClaim>): ClaimFacts[] {
  const { pause, type } = o.neoset.spec.updateStrategy;
  if (pause || type === 'OnDelete') return [];
  const counted = { ...o, claimsResizing: resizing };
  let slots = resolveMaxUnavailable(o.neoset.spec) - unavailableInRange(counted);
  const out: ClaimFacts[] = [];
  const byOrdinal = new Map<number, ClaimFacts[]>();
  for (const c of claims) if (c.short && c.standing !== 'unbound' && o.positions.get(c.ordinal)! >= o.partition && !pvcs.get(c.name)?.metadata.deletionTimestamp) byOrdinal.set(c.ordinal, [...(byOrdinal.get(c.ordinal) ?? []), c]);
  for (const ordinal of [...byOrdinal.keys()].sort((a, b) => b - a)) {
    const adds = !countsUnavailable(counted, ordinal);
    if (adds && slots <= 0) continue;
    if (adds) slots--;
    out.push(...byOrdinal.get(ordinal)!);
  }
  return out;
}

function resizeClaim(o: Rollout, c: ClaimFacts, pvc: PersistentVolumeClaim): Action {
  return {
    kind: 'resizeClaim',
    pvc: objectRef(pvc.metadata),
    storage: c.wanted,
    event: {
      type: 'Normal',
      reason: 'SuccessfulResize',
      message: `resize Claim ${c.name} for Pod ${c.pod} in NeoSet ${o.neoset.metadata.name}: storage ${c.requested ?? '(none)'} -> ${c.wanted}`,
    },
  };
}

function readClaims(o: Rollout, pvcs: Map<string, PersistentVolumeClaim>): ClaimFacts[] {
  const out: ClaimFacts[] = [];
  const templates = o.neoset.spec.volumeClaimTemplates.flatMap((t) => {
    const wanted = storageOf(t.spec);
    return wanted !== undefined && Number.isFinite(milli(wanted)) ? [{ name: t.metadata.name, wanted }] : [];
  });
  if (templates.length === 0) return out;
  // §4.12: the claims of the ordinals in range; the partition compares their positions.
  for (const ordinal of o.ordinals) {
    for (const t of templates) {
      const name = volumeClaimName(t.name, o.neoset.metadata.name, ordinal);
      const pvc = pvcs.get(name);
      // A missing claim is created from the template (§4.3), at the template's size.
      if (pvc) out.push(claimFacts(pvc, name, podName(o.neoset.metadata.name, ordinal), ordinal, t.wanted));
    }
  }
  return out;
}

function claimFacts(pvc: PersistentVolumeClaim, name: string, pod: string, ordinal: number, wanted: string): ClaimFacts {
  const requested = storageOf(pvc.spec);
  const status = (pvc.status ?? {}) as {
    phase?: unknown;
    capacity?: Record<string, unknown>;
    conditions?: unknown;
    allocatedResourceStatuses?: Record<string, unknown>;
  };
  const capacity = quantityText(status.capacity?.storage);
  const bound = status.phase === 'Bound';
  // A request this side of the template (raised by hand beyond it, too) is not behind.
  const short = !(milli(requested) >= milli(wanted));
  const resizing = bound && !(milli(capacity) >= milli(requested));
  // A claim resizing toward an older request counts as resizing (its pod is in its update) even
  // when the template asks for more again: it is patched again, on the slot it holds already.
  const standing: ClaimStanding = resizing ? 'resizing' : short ? (bound ? 'behind' : 'unbound') : 'done';
  const conditions = (Array.isArray(status.conditions) ? status.conditions : []).filter(
    (c): c is { type: string; status: string; message?: unknown } => typeof c?.type === 'string' && c.status === 'True',
  );
  const shown = SHOWN_CONDITIONS.map((type) => conditions.find((c) => c.type === type)).find((c) => c !== undefined);
  const condition = shown ? { type: shown.type, message: typeof shown.message === 'string' ? shown.message.slice(0, 300) : '' } : null;
  const allocation = status.allocatedResourceStatuses?.storage;
  const infeasible = typeof allocation === 'string' && allocation.endsWith('Infeasible') ? allocation : null;
  const error = condition && ERROR_CONDITIONS.includes(condition.type) ? `${condition.type}${condition.message ? `: ${condition.message}` : ''}` : null;
  return { name, pod, ordinal, standing, short, wanted, requested, capacity, condition, failed: standing === 'resizing' ? (error ?? infeasible) : null };
}

function storageOf(spec: unknown): string | undefined {
  const requests = (spec as { resources?: { requests?: Record<string, unknown> } } | undefined)?.resources?.requests;
  return quantityText(requests?.storage);
}

const quantityText = (q: unknown): string | undefined => (typeof q === 'string' ? q : typeof q === 'number' && Number.isFinite(q) ? String(q) : undefined);
