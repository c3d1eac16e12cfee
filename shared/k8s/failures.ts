// A write the API server refused for another reason than a lost race (quota, validation, a name
// taken) is made visible (SPEC §4.6): a Warning Event and the ReplicaFailure condition in the status —
// cleared by the next plan that goes through. Both say what was refused and a short reason (SPEC §2.5:
// nothing crosses namespaces): the Status's code and reason, and the field and reason of each cause —
// never the Status's message. That text is whatever the API server's admission chain wrote (another
// team's webhook or ValidatingAdmissionPolicy, a quota's usage) and may name objects the NeoSet's
// readers may not read; the reconcile log line keeps it whole for the operator.
import { cut } from '../admission/dry-run-refusal.ts';
import type { Condition, NeoSetStatus } from '../api/neoset.ts';
import { CONDITION_REPLICA_FAILURE } from '../core/status/conditions.ts';
import { describeAction, refusalReason } from '../core/actions.ts';
import type { Action, EventSpec } from '../core/plan.ts';
import { rfc3339 } from '../core/time.ts';
import { ApiError } from './client.ts';

/** A refusal NeoSet makes itself (shared/k8s/apply.ts): its message is its own, about its own objects. */
export class OwnRefusal extends ApiError {}

/** Causes shown in a refusal (a 422 of many invalid fields says the first few). */
const MAX_CAUSES = 3;
const MAX_CAUSE_CHARS = 120;

/**
 * What a refusal says: `403 Forbidden`, `422 Invalid (spec.containers[0].image: FieldValueRequired)`.
 * NeoSet's own refusals (a name taken by an object it may not adopt, a write it would not send
 * unconditionally) are its words about its own objects, and are kept whole.
 */
export function refusalText(err: ApiError): string {
  if (err instanceof OwnRefusal) return `${err.status} ${err.reason}: ${err.serverMessage}`;
  // A cause with neither (a policy's, carrying only its message) says nothing more.
  const named = err.causes.filter((c) => c.field || c.reason);
  const causes = named.slice(0, MAX_CAUSES).map((c) => cut([c.field, c.reason].filter(Boolean).join(': '), MAX_CAUSE_CHARS));
  const more = named.length > MAX_CAUSES ? `; and ${named.length - MAX_CAUSES} more` : '';
  return `${err.status} ${err.reason}${causes.length > 0 ? ` (${causes.join('; ')}${more})` : ''}`;
}

export function withoutFailure(status: NeoSetStatus): NeoSetStatus {
  if (!status.conditions?.some((c) => c.type === CONDITION_REPLICA_FAILURE)) return status;
  return { ...status, conditions: status.conditions.filter((c) => c.type !== CONDITION_REPLICA_FAILURE) };
}

/** FailedCreate / FailedDelete / FailedUpdate: the Warning Event and the ReplicaFailure condition (§4.6). */
export async function reportFailure(
  neoset: { metadata: { generation?: number } },
  action: Action | undefined,
  err: ApiError,
  ctx: {
    event: (key: string, spec: EventSpec) => Promise<void>;
    now: () => Date;
    current: NeoSetStatus;
    writeStatus: (s: NeoSetStatus, what: string) => Promise<void>;
  },
): Promise<void> {
  const reason = action ? refusalReason(action) : 'FailedUpdate';
  const message = `${action ? describeAction(action) : 'write'}: ${refusalText(err)}`;
  await ctx.event(`${reason}/${action ? describeAction(action) : ''}/${message}`, { type: 'Warning', reason, message });
  const condition: Condition = {
    type: CONDITION_REPLICA_FAILURE,
    status: 'True',
    reason,
    message,
    lastTransitionTime: rfc3339(ctx.now().getTime()),
    observedGeneration: neoset.metadata.generation ?? 0,
  };
  const previous = ctx.current.conditions?.find((c) => c.type === CONDITION_REPLICA_FAILURE);
  if (previous && previous.reason === reason && previous.message === message) return; // said already: no write, no event loop
  const conditions = [...(ctx.current.conditions ?? []).filter((c) => c.type !== CONDITION_REPLICA_FAILURE), condition];
  await ctx.writeStatus({ ...ctx.current, conditions }, 'failure');
}
