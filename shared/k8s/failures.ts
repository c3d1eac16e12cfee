// A write the API server refused for another reason than a lost race (quota, validation, a name
// taken) is made visible (SPEC §4.6): a Warning Event with the API server's own message, and the
// ReplicaFailure condition in the status — cleared by the next plan that goes through.
import type { Condition, NeoSetStatus } from '../api/neoset.ts';
import { CONDITION_REPLICA_FAILURE } from '../core/status/conditions.ts';
import { describeAction, refusalReason } from '../core/actions.ts';
import type { Action, EventSpec } from '../core/plan.ts';
import { rfc3339 } from '../core/time.ts';
import type { ApiError } from './client.ts';

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
  const message = `${action ? describeAction(action) : 'write'}: ${err.status} ${err.reason}: ${err.serverMessage}`;
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
