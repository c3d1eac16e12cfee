// SPEC §4.12: what happened, decided purely from the status the reconcile read and the status it is
// about to write (and the plan's revision writes, for the numbers). The applier sends the result
// after that status write succeeded (shared/events/notify.ts): the writer of the status that made an
// occurrence true is its one sender, and a decider that lost the race sends nothing.
//
// Peer: Argo Rollouts' notification triggers (on-rollout-updated, -step-completed, -paused,
// -completed, -aborted). Unlike Argo's controller, NeoSet keeps no "already sent" memory: each id is
// deterministic from (NeoSet uid, revision name and number, occurrence, step or the transition's
// time as stored in status), so a subscriber drops redeliveries by id.
import type { Condition, NeoSetStatus, Phase } from '../api/neoset.ts';
import { NOTIFICATION_TYPE_PREFIX, type Notification, type NotificationData, type NotificationKind } from '../api/notification.ts';
import { API_VERSION } from '../api/names.ts';
import type { Plan } from './plan.ts';
import type { Snapshot } from './snapshot.ts';
import { toMs } from './time.ts';

/** Phases with rollout work left (§4.6). */
const PENDING: ReadonlySet<Phase | undefined> = new Set<Phase | undefined>(['Canary', 'RollingOut', 'Paused', 'Failed']);

export function notifications(snapshot: Snapshot, plan: Pick<Plan, 'actions' | 'status'>): Notification[] {
  const { neoset } = snapshot;
  const before = neoset.status ?? {};
  const after = plan.status ?? before;
  // A NeoSet's first status (nothing read before): no rollout has happened to tell of.
  if (!before.updateRevision || !after.updateRevision) return [];
  const numbers = revisionNumbers(snapshot, plan);
  const rev = after.updateRevision;
  const revKey = `${rev}/${numbers.get(rev) ?? 0}`;
  const uid = neoset.metadata.uid ?? '';
  const steps = neoset.spec.updateStrategy.canary?.steps ?? [];
  const canary = after.canary?.revision === rev ? after.canary : undefined;
  const wasCanary = before.canary?.revision === before.updateRevision ? before.canary : undefined;
  const request = before.canary?.request;
  // The plugin's promote|abort write (commands.ts) is news once: the decision that clears it reports it.
  const consumed = (verb: string) => request !== undefined && request.startsWith(verb) && after.canary?.request === undefined;
  const progressing = condition(after, 'Progressing');
  const out: Notification[] = [];
  const add = (kind: NotificationKind, discriminator: string, extra: Partial<NotificationData> = {}) => {
    out.push({
      kind,
      type: `${NOTIFICATION_TYPE_PREFIX}${kind}`,
      id: [uid, revKey, kind, discriminator].filter((p) => p !== '').join('/'),
      source: `/apis/${API_VERSION}/namespaces/${neoset.metadata.namespace ?? 'default'}/neosets/${neoset.metadata.name}`,
      subject: neoset.metadata.name,
      data: { ...dataOf(snapshot, after, numbers, canary ? { index: canary.stepIndex, total: steps.length } : undefined), ...extra },
    });
  };

  const newRollout = before.updateRevision !== rev;
  if (newRollout) {
    // §4.2/§4.7: an older revision's template is back (rollout undo): it is stored already.
    const reused = snapshot.revisions.some((r) => r.metadata.name === rev);
    add(reused ? 'rolledback' : 'started', '');
  }
  // A retry starts the aborted canary again at step 0 (with a new stepStartedAt, so a new id): reached again.
  if (canary && (newRollout || !wasCanary || wasCanary.stepIndex !== canary.stepIndex || consumed('promote') || consumed('retry'))) {
    add('step', `${canary.stepIndex}@${canary.stepStartedAt}`);
  }
  if (!newRollout && consumed('promote')) add('promoted', request!);
  // Without canary steps, a promotion is the partition lowered to 0 by hand: Canary -> RollingOut.
  else if (!newRollout && steps.length === 0 && before.phase === 'Canary' && after.phase === 'RollingOut') add('promoted', `partition@${progressing?.lastTransitionTime ?? ''}`);
  if (before.phase !== 'Paused' && after.phase === 'Paused') add('paused', pausedSince(after));
  if (before.phase === 'Paused' && !newRollout && (after.phase === 'Canary' || after.phase === 'RollingOut' || after.phase === 'Completed')) add('resumed', condition(after, 'Paused')?.lastTransitionTime ?? '');
  if (before.phase !== 'Failed' && after.phase === 'Failed') add('failed', progressing?.lastTransitionTime ?? '', { reason: progressing?.reason, message: progressing?.message });
  const abort = canary?.abort;
  if (abort && (!wasCanary?.abort || consumed('abort') || newRollout)) add('aborted', abort.at, { reason: abort.reason, message: abort.message });
  if (after.phase === 'Completed' && PENDING.has(before.phase)) add('completed', '');
  const replicas = neoset.spec.replicas;
  // A change of replicas is a change of the spec (kubectl scale, an HPA): generation 1 is the creation.
  const generation = neoset.metadata.generation ?? 1;
  if (generation > 1 && settled(after, replicas) && !settled(before, replicas) && !PENDING.has(before.phase) && !PENDING.has(after.phase)) {
    // One id per spec generation: a pod that restarts and comes back in the same generation repeats it.
    add('scaled', `${replicas}@${generation}`);
  }
  return out;
}

/**
 * When the phase became Paused, as status stores it. Phase Paused needs the Paused and Progressing
 * conditions both True (status/phase.ts, conditions.ts), so entering it flips one of them: Paused from
 * Canary or RollingOut, Progressing from Failed, Completed or Idle; the later of their transition
 * times is the entry's, and neither moves while the pause lasts. The Paused condition alone is not:
 * it stays True across Paused -> Failed -> Paused (an in-place deadline passed, then the late pod
 * finished), and the second pause would repeat the first one's id — sent again by a later write.
 */
function pausedSince(s: NeoSetStatus): string {
  const times = [condition(s, 'Paused')?.lastTransitionTime ?? '', condition(s, 'Progressing')?.lastTransitionTime ?? ''];
  return times.reduce((a, b) => (toMs(b) > toMs(a) ? b : a));
}

function settled(s: NeoSetStatus, replicas: number): boolean {
  return s.replicas === replicas && s.readyReplicas === replicas;
}

function condition(s: NeoSetStatus, type: string): Condition | undefined {
  return s.conditions?.find((c) => c.type === type);
}

/** Revision numbers as the plan leaves them: a create or a renumber (rollback) of this plan wins. */
function revisionNumbers(snapshot: Snapshot, plan: Pick<Plan, 'actions'>): Map<string, number> {
  const numbers = new Map(snapshot.revisions.map((r) => [r.metadata.name, r.revision]));
  for (const a of plan.actions) {
    if (a.kind === 'createRevision') numbers.set(a.revision.metadata.name, a.revision.revision);
    if (a.kind === 'renumberRevision') numbers.set(a.revision.name, a.number);
  }
  return numbers;
}

function dataOf(snapshot: Snapshot, s: NeoSetStatus, numbers: Map<string, number>, step: NotificationData['step']): NotificationData {
  const { metadata, spec } = snapshot.neoset;
  const ref = (name: string | undefined) => (name === undefined ? undefined : { name, ...(numbers.has(name) ? { number: numbers.get(name)! } : {}) });
  const progressing = condition(s, 'Progressing');
  return {
    neoset: { name: metadata.name, namespace: metadata.namespace ?? 'default', uid: metadata.uid ?? '' },
    ...(s.currentRevision ? { currentRevision: ref(s.currentRevision) } : {}),
    ...(s.updateRevision ? { updateRevision: ref(s.updateRevision) } : {}),
    images: { ...(s.currentImage ? { current: s.currentImage } : {}), ...(s.targetImage ? { update: s.targetImage } : {}) },
    ...(step ? { step } : {}),
    counts: { replicas: spec.replicas, updated: s.updatedReplicas ?? 0, ready: s.readyReplicas ?? 0, available: s.availableReplicas ?? 0 },
    ...(progressing ? { reason: progressing.reason, message: progressing.message } : {}),
    ...(s.phase ? { phase: s.phase } : {}),
  };
}
