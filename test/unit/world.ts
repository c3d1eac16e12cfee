// A pure in-memory cluster for driving decide(): it applies plan actions with the applier's
// semantics (each write conditional on the resourceVersion it was computed from; a 409 stops the
// plan; the status is written last, only if every action went through), simulates the kubelet
// (pods start, become ready, restart containers on an image patch, crashloop on a bad image, fail),
// the garbage collector (claims owned by a removed pod), user edits, and a clock.
import { ANNOTATION_INPLACE_STATE, CONDITION_INPLACE_READY, LABEL_REVISION_HASH } from '../../shared/api/names.ts';
import { NeoSet, type NeoSetSpecInput } from '../../shared/api/neoset.ts';
import { decide } from '../../shared/core/decide.ts';
import type { Observation } from '../oracle/index.ts';
import type { ControllerRevision, PersistentVolumeClaim, Pod } from '../../shared/core/objects.ts';
import type { Action, ObjectRef, Plan } from '../../shared/core/plan.ts';
import type { Snapshot } from '../../shared/core/snapshot.ts';
import { rfc3339 } from '../../shared/core/time.ts';
import { failPod, makeUnready, setCondition, syncPod } from './kubelet.ts';

export { BAD_IMAGE_MARK } from './kubelet.ts';

type NeoSetT = ReturnType<typeof NeoSet.parse>;

export const T0 = Date.parse('2025-01-01T00:00:00Z');

export type WorldObservation = Snapshot & Observation & { at: number };

export interface ReconcileResult {
  plan: Plan;
  /** Actions that went through. */
  applied: Action[];
  conflict: boolean;
  statusWritten: boolean;
}

export class World {
  now = T0;
  neoset: NeoSetT;
  pods = new Map<string, Pod>();
  revisions = new Map<string, ControllerRevision>();
  pvcs = new Map<string, PersistentVolumeClaim>();
  events = new Map<string, number>();
  #rv = 1;
  #id = 1;

  constructor(spec: Partial<NeoSetSpecInput> & { image?: string }, name = 'web') {
    const { image = 'nginx:v1', ...rest } = spec;
    this.neoset = NeoSet.parse({
      apiVersion: 'neo.io/v1alpha1',
      kind: 'NeoSet',
      metadata: { name, namespace: 'default', uid: 'neoset-uid', generation: 1, resourceVersion: this.nextRv() },
      spec: {
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'app', image, readinessProbe: { httpGet: { path: '/', port: 80 } } }] },
        },
        ...rest,
      },
    });
  }

  /** An independent copy of the whole world (to try alternative futures). */
  fork(): World {
    const w = new World({}, this.neoset.metadata.name);
    w.now = this.now;
    w.neoset = structuredClone(this.neoset);
    w.pods = structuredClone(this.pods);
    w.revisions = structuredClone(this.revisions);
    w.pvcs = structuredClone(this.pvcs);
    w.events = new Map(this.events);
    w.#rv = this.#rv;
    w.#id = this.#id;
    return w;
  }

  nextRv(): string {
    return String(this.#rv++);
  }

  nextId(): string {
    return String(this.#id++);
  }

  // ---- observation -------------------------------------------------------------------------

  snapshot(): Snapshot {
    return structuredClone({
      neoset: this.neoset,
      pods: [...this.pods.values()],
      revisions: [...this.revisions.values()],
      pvcs: [...this.pvcs.values()],
    });
  }

  /** The state as the invariant checker takes it; also a snapshot decide() can read. */
  observation(): WorldObservation {
    return { ...this.snapshot(), at: this.now };
  }

  pod(ordinal: number): Pod | undefined {
    return this.pods.get(`${this.neoset.metadata.name}-${ordinal}`);
  }

  revisionOf(ordinal: number): string | undefined {
    return this.pod(ordinal)?.metadata.labels?.[LABEL_REVISION_HASH];
  }

  imageOf(ordinal: number): string | undefined {
    return this.pod(ordinal)?.spec.containers[0].image;
  }

  // ---- the reconcile function --------------------------------------------------------------

  /**
   * decide() then apply: stop at the first conflict, or after `crashAfter` actions (a crash).
   * `snapshot` may be passed when the caller holds a copy of the current state (an observation).
   */
  reconcile(opts: { crashAfter?: number; snapshot?: Snapshot } = {}): ReconcileResult {
    const snapshot = opts.snapshot ?? this.snapshot();
    const plan = decide(snapshot, new Date(this.now));
    const applied: Action[] = [];
    if (plan.claim && plan.status) {
      // §2.0: the claim first, conditional on the NeoSet's resourceVersion.
      if (opts.crashAfter === 0) return { plan, applied, conflict: false, statusWritten: false };
      if (this.neoset.metadata.resourceVersion !== snapshot.neoset.metadata.resourceVersion) return { plan, applied, conflict: true, statusWritten: false };
      this.neoset.status = structuredClone(plan.status);
      this.neoset.metadata.resourceVersion = this.nextRv();
    }
    for (const action of plan.actions) {
      if (opts.crashAfter !== undefined && applied.length >= opts.crashAfter) return { plan, applied, conflict: false, statusWritten: false };
      if (!this.apply(action)) return { plan, applied, conflict: true, statusWritten: false };
      applied.push(action);
    }
    // crashAfter >= the number of actions: the crash comes before the status write
    if (opts.crashAfter !== undefined) return { plan, applied, conflict: false, statusWritten: false };
    if (plan.status && !plan.claim) {
      this.neoset.status = structuredClone(plan.status);
      this.neoset.metadata.resourceVersion = this.nextRv();
    }
    return { plan, applied, conflict: false, statusWritten: plan.status !== null };
  }

  /** One action as a conditional write; false is a 409 (or 404). */
  apply(a: Action): boolean {
    switch (a.kind) {
      case 'createRevision': {
        if (this.revisions.has(a.revision.metadata.name)) return false;
        const r = structuredClone(a.revision);
        r.metadata.uid = `rev-${this.nextId()}`;
        r.metadata.resourceVersion = this.nextRv();
        this.revisions.set(r.metadata.name, r);
        return true;
      }
      case 'renumberRevision':
        return this.#write(this.revisions, a.revision, (r) => {
          r.revision = a.number;
        });
      case 'deleteRevision': {
        const r = this.revisions.get(a.revision.name);
        if (!r || !matches(r, a.revision)) return false;
        this.revisions.delete(a.revision.name);
        return true;
      }
      case 'createPVC': {
        if (this.pvcs.has(a.pvc.metadata.name)) return false;
        const p = structuredClone(a.pvc);
        p.metadata.uid = `pvc-${this.nextId()}`;
        p.metadata.resourceVersion = this.nextRv();
        this.pvcs.set(p.metadata.name, p);
        return true;
      }
      case 'setPVCOwners':
        return this.#write(this.pvcs, a.pvc, (p) => {
          p.metadata.ownerReferences = structuredClone(a.ownerReferences);
        });
      case 'createPod': {
        if (this.pods.has(a.pod.metadata.name)) return false;
        const p = structuredClone(a.pod);
        p.metadata.uid = `pod-${this.nextId()}`;
        p.metadata.resourceVersion = this.nextRv();
        p.metadata.creationTimestamp = rfc3339(this.now);
        p.status = { phase: 'Pending', conditions: [] };
        this.pods.set(p.metadata.name, p);
        return true;
      }
      case 'deletePod':
        return this.#write(this.pods, a.pod, (p) => {
          p.metadata.deletionTimestamp = rfc3339(this.now);
        });
      case 'markDraining':
        return this.#write(this.pods, a.pod, (p) => {
          p.metadata.annotations = { ...p.metadata.annotations, [ANNOTATION_INPLACE_STATE]: JSON.stringify(a.state) };
        });
      case 'setInPlaceReady':
        return this.#write(this.pods, a.pod, (p) => {
          setCondition(p, { type: CONDITION_INPLACE_READY, status: a.status, reason: a.reason, message: a.message }, this.now);
        });
      case 'patchImages':
        return this.#write(this.pods, a.pod, (p) => {
          for (const c of p.spec.containers) if (a.images[c.name]) c.image = a.images[c.name];
          p.metadata.labels = mergePatch({ ...p.metadata.labels, [LABEL_REVISION_HASH]: a.revision }, a.labels);
          p.metadata.annotations = mergePatch(
            { ...p.metadata.annotations, [ANNOTATION_INPLACE_STATE]: JSON.stringify(a.state) },
            a.annotations,
          );
        });
      case 'finishInPlaceUpdate':
        return this.#write(this.pods, a.pod, (p) => {
          const { [ANNOTATION_INPLACE_STATE]: _, ...rest } = p.metadata.annotations ?? {};
          p.metadata.annotations = rest;
        });
      case 'restartDeadline':
        return this.#write(this.pods, a.pod, (p) => {
          p.metadata.annotations = { ...p.metadata.annotations, [ANNOTATION_INPLACE_STATE]: JSON.stringify(a.state) };
        });
      case 'releaseClaim':
        return this.#write(this.pods, a.pod, (p) => {
          p.metadata.annotations = { ...p.metadata.annotations, 'neoset.neo.io/claim-released': rfc3339(this.now) };
        });
      case 'adoptPod':
        return this.#write(this.pods, a.object, (p) => {
          p.metadata.ownerReferences = structuredClone(a.ownerReferences);
        });
      case 'adoptRevision':
        return this.#write(this.revisions, a.object, (r) => {
          r.metadata.ownerReferences = structuredClone(a.ownerReferences);
        });
      case 'recordEvent':
        this.events.set(a.key, (this.events.get(a.key) ?? 0) + 1);
        return true;
    }
  }

  #write<T extends { metadata: { name: string; uid?: string; resourceVersion?: string } }>(
    store: Map<string, T>,
    ref: ObjectRef,
    change: (obj: T) => void,
  ): boolean {
    const obj = store.get(ref.name);
    if (!obj || !matches(obj, ref)) return false;
    change(obj);
    obj.metadata.resourceVersion = this.nextRv();
    return true;
  }

  // ---- the kubelet -------------------------------------------------------------------------

  /** One kubelet sync of one pod; a terminating pod is removed (and the garbage collector runs). */
  kubeletSync(name: string): void {
    const pod = this.pods.get(name);
    if (!pod) return;
    if (pod.metadata.deletionTimestamp) return this.#remove(pod);
    if (syncPod(pod, this)) pod.metadata.resourceVersion = this.nextRv();
  }

  /** Every pod synced `rounds` times: a healthy kubelet catching up. */
  kubeletSettle(rounds = 4): void {
    for (let i = 0; i < rounds; i++) for (const name of [...this.pods.keys()]) this.kubeletSync(name);
  }

  /** A container stops being ready (a failing probe) until the kubelet's next sync. */
  kubeletUnready(name: string): void {
    const pod = this.pods.get(name);
    if (pod && !pod.metadata.deletionTimestamp && makeUnready(pod, this)) pod.metadata.resourceVersion = this.nextRv();
  }

  /** The pod fails for good (evicted): phase Failed. */
  kubeletFail(name: string): void {
    const pod = this.pods.get(name);
    if (!pod || pod.metadata.deletionTimestamp) return;
    failPod(pod, this);
    pod.metadata.resourceVersion = this.nextRv();
  }

  #remove(pod: Pod): void {
    this.pods.delete(pod.metadata.name);
    // The garbage collector: claims owned by the removed pod go with it.
    for (const [claim, pvc] of this.pvcs) {
      if ((pvc.metadata.ownerReferences ?? []).some((r) => r.kind === 'Pod' && r.uid === pod.metadata.uid)) this.pvcs.delete(claim);
    }
  }

  // ---- the user ----------------------------------------------------------------------------

  edit(change: (spec: NeoSetT['spec']) => void): void {
    change(this.neoset.spec);
    this.neoset.metadata.generation = (this.neoset.metadata.generation ?? 0) + 1;
    this.neoset.metadata.resourceVersion = this.nextRv();
  }

  setImage(image: string): void {
    this.edit((s) => {
      s.template.spec.containers[0].image = image;
    });
  }

  /** `kubectl neoset rollout undo --to-revision=N`: revision N's template back into spec.template. */
  rollbackTo(number: number): boolean {
    const r = [...this.revisions.values()].find((x) => x.revision === number);
    if (!r) return false;
    this.edit((s) => {
      s.template = structuredClone(r.data.spec.template) as NeoSetT['spec']['template'];
    });
    return true;
  }

  userDelete(name: string): void {
    const pod = this.pods.get(name);
    if (pod && !pod.metadata.deletionTimestamp) {
      pod.metadata.deletionTimestamp = rfc3339(this.now);
      pod.metadata.resourceVersion = this.nextRv();
    }
  }

  advance(seconds: number): void {
    this.now += seconds * 1000;
  }

  /**
   * Reconcile, then let a healthy kubelet catch up, until a decision has nothing to do (advancing the
   * clock to each requeueAfter). `check` sees every state change: after each reconcile and each
   * kubelet round, with the state before it. Returns the number of rounds, or -1 if `max` was not
   * enough. A conflict throws: nothing else writes, so it could only come from the plan itself.
   */
  settle(max = 200, check?: (previous: WorldObservation, current: WorldObservation) => void): number {
    let previous = this.observation();
    const observe = () => {
      if (!check) return (previous = this.observation());
      const current = this.observation();
      check(previous, current);
      previous = current;
    };
    for (let round = 0; round < max; round++) {
      const r = this.reconcile({ snapshot: previous });
      if (r.conflict) throw new Error(`the plan conflicts with itself: ${r.plan.actions.map((a) => a.kind).join(', ')}`);
      observe();
      const kubelet = JSON.stringify(previous.pods.map((p) => p.status));
      this.kubeletSettle(1);
      observe();
      const kubeletQuiet = kubelet === JSON.stringify(previous.pods.map((p) => p.status));
      if (r.plan.actions.length === 0 && r.plan.status === null) {
        if (r.plan.requeueAfter !== null) {
          this.advance(r.plan.requeueAfter);
          previous = { ...previous, at: this.now };
        } else if (kubeletQuiet) return round;
      }
    }
    return -1;
  }

  /** Reconcile and let a healthy kubelet catch up, `n` times, advancing the clock as asked. */
  run(n: number, secondsPerRound = 1): void {
    for (let i = 0; i < n; i++) {
      this.reconcile();
      this.kubeletSettle(1);
      this.advance(secondsPerRound);
    }
  }
}

function matches(obj: { metadata: { uid?: string; resourceVersion?: string } }, ref: ObjectRef): boolean {
  return (obj.metadata.uid ?? '') === ref.uid && (obj.metadata.resourceVersion ?? '') === ref.resourceVersion;
}

function mergePatch(base: Record<string, string>, patch: Record<string, string | null> | undefined): Record<string, string> {
  const out = { ...base };
  for (const [k, v] of Object.entries(patch ?? {})) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}
