// SPEC §4.12: the rollout notifications NeoSet sends to $K_SINK as CloudEvents, and the shape of their
// `data` — the contract a subscriber parses (examples/notifications/receiver.ts does, with this schema).
import { z } from 'zod';

/** Every notification's CloudEvent type starts with this: a Trigger filters on it (`prefix`). */
export const NOTIFICATION_TYPE_PREFIX = 'io.neo.neoset.rollout.';

/** What happened, as the `type` suffix: io.neo.neoset.rollout.<kind>. */
export const NotificationKind = z.enum(['started', 'step', 'paused', 'resumed', 'promoted', 'completed', 'failed', 'aborted', 'rolledback', 'scaled']);

const RevisionRef = z.object({
  name: z.string().max(253),
  /** The ControllerRevision's number (kubectl neoset rollout history); absent when it is not known. */
  number: z.int().min(0).optional(),
});

export const NotificationData = z.object({
  neoset: z.object({ name: z.string().max(253), namespace: z.string().max(63), uid: z.string().max(64) }),
  currentRevision: RevisionRef.optional(),
  updateRevision: RevisionRef.optional(),
  /** The main container's image of currentRevision and of updateRevision. */
  images: z.object({ current: z.string().max(1024).optional(), update: z.string().max(1024).optional() }),
  /** §4.11: the canary step reached (index 0-based; index == total: every step done); absent without steps. */
  step: z.object({ index: z.int().min(0), total: z.int().min(0) }).optional(),
  counts: z.object({ replicas: z.int().min(0), updated: z.int().min(0), ready: z.int().min(0), available: z.int().min(0) }),
  /** The Progressing condition's reason and message (for failed: why; for aborted: the abort's). */
  reason: z.string().max(256).optional(),
  message: z.string().max(4096).optional(),
  /** The phase the status write that made it true left the NeoSet in. */
  phase: z.string().max(32).optional(),
});

export type NotificationKind = z.infer<typeof NotificationKind>;
export type NotificationData = z.infer<typeof NotificationData>;

/** A notification as the core decides it: the CloudEvent's attributes and data, no transport. */
export interface Notification {
  kind: NotificationKind;
  type: string;
  /** Deterministic from (NeoSet uid, revision, occurrence, step): redeliveries and replays share it. */
  id: string;
  source: string;
  subject: string;
  data: NotificationData;
}

/**
 * The one line that tells a notification: the NeoSet's name first, then what happened — the chat
 * message of examples/notifications/receiver.ts, the message of the Event the applier mirrors it as.
 */
export function notificationText(kind: NotificationKind, d: NotificationData): string {
  const to = d.images.update ?? d.updateRevision?.name ?? '?';
  const progress = `${d.counts.updated}/${d.counts.replicas}`;
  const why = d.reason ? `: ${d.reason}${d.message ? ` (${d.message})` : ''}` : '';
  const name = d.neoset.name;
  switch (kind) {
    case 'started':
      return `${name}: rollout to ${to} started (from ${d.images.current ?? '?'})`;
    case 'step':
      return `${name}: rollout to ${to} reached canary step ${Math.min(d.step!.index + 1, d.step!.total)}/${d.step!.total}${d.step!.index >= d.step!.total ? ', all done' : ''} (${progress})`;
    case 'paused':
    case 'resumed':
    case 'promoted':
      return `${name}: rollout to ${to} ${kind} (${progress})`;
    case 'completed':
      return `${name}: rollout to ${to} completed (${progress})`;
    case 'failed':
    case 'aborted':
      return `${name}: rollout to ${to} ${kind}${why}`;
    case 'rolledback':
      return `${name}: rolled back to ${to} (revision ${d.updateRevision?.number ?? '?'})`;
    case 'scaled':
      return `${name}: scaled to ${d.counts.replicas} (${d.counts.ready}/${d.counts.replicas} ready)`;
  }
}
