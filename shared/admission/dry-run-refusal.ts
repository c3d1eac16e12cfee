// Which answers of the API server to the dry-run create of ordinal 0's Pod (SPEC §5) are the
// template's fault, and what a NeoSet author is told of a refusal (SPEC §2.3): the field and a short reason, never the API server's whole message. Those messages describe the
// namespace as much as the template — which ServiceAccounts exist, the ResourceQuota's usage, which
// other webhooks and policies run and what they say — and whoever writes a NeoSet need not be allowed
// to read any of that. What a template author can act on is kept: the field path (mapped from the
// Pod to the NeoSet) and the validation reason of each invalid value, the PodSecurity level and its
// violations (both derived from the template alone), the names of unknown fields.
import { ApiError, type StatusCause } from '../k8s/client.ts';
import { joinPath } from '../core/field-path.ts';
import { privilegedPodsReason } from './privileged-pods.ts';

export type DryRunResult =
  | { ok: true; warnings?: string[] }
  /**
   * message: short, for the user (field and reason). brief: field and rule only, nothing the
   * namespace's state decides — for a caller admission cannot authenticate (briefReason). detail: the
   * API server's whole answer, for our log. transient: the API server could not answer (unreachable,
   * overloaded, timeout, or we lack RBAC).
   */
  | { ok: false; message: string; brief?: string; detail?: string; code?: number; transient?: boolean };

/** Each part of a refusal is cut here; a whole refusal at MAX_REFUSAL_CHARS. */
const MAX_PART_CHARS = 200;
export const MAX_REFUSAL_CHARS = 600;
const MAX_CAUSES = 3;

/** How a user reproduces the whole answer with their own rights, when we do not repeat it. */
const SEE_FOR_YOURSELF = 'a dry-run create of the pod (kubectl create --dry-run=server) shows the API server\'s answer';

export const cut = (text: string, max = MAX_PART_CHARS): string => {
  const flat = text.replace(/[\r\n]+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** A field of ordinal 0's Pod as the field of the NeoSet it comes from. */
export function neosetField(podField: string | undefined): string {
  const field = (podField ?? '').replace(/^\./, '');
  // The pod's name is the NeoSet's with `-0`; every other pod field is the template's.
  if (field === 'metadata.name' || field === 'metadata.namespace') return 'metadata.name';
  return joinPath('spec.template', field);
}

function causesReason(causes: StatusCause[]): string {
  const shown = causes.slice(0, MAX_CAUSES).map((c) => `${neosetField(c.field)}: ${cut(c.message || c.reason || 'invalid')}`);
  const more = causes.length > MAX_CAUSES ? `; and ${causes.length - MAX_CAUSES} more` : '';
  return `${shown.join('; ')}${more}`;
}

/** Strict field validation names the unknown (or duplicated) fields; nothing else of it is needed. */
function strictDecodingReason(message: string): string | null {
  const fields = [...message.matchAll(/(unknown|duplicate) field "([^"]{1,256})"/g)];
  if (fields.length === 0) return null;
  const shown = fields.slice(0, MAX_CAUSES).map(([, kind, field]) => `${neosetField(field)}: ${kind} field`);
  return `${shown.join('; ')}${fields.length > MAX_CAUSES ? `; and ${fields.length - MAX_CAUSES} more` : ''}`;
}

/** Whose refusal a 403 is, by name only: a webhook's or a policy's own words stay with the API server. */
function forbiddenReason(message: string): string {
  const pss = /violates PodSecurity "([^"]{1,64})": (.*)$/s.exec(message);
  // The level is the namespace's label (readable by anyone who may get the namespace); the violations
  // are computed from the template alone.
  if (pss) return `spec.template: violates PodSecurity "${pss[1]}": ${cut(pss[2], 300)}`;
  if (/service ?account/i.test(message)) return `spec.template.spec.serviceAccountName: the ServiceAccount cannot be used in this namespace (${SEE_FOR_YOURSELF})`;
  const webhook = /admission webhook "([^"]{1,253})" denied/.exec(message);
  if (webhook) return `spec.template: refused by the admission webhook "${webhook[1]}" (${SEE_FOR_YOURSELF})`;
  const privileged = privilegedPodsReason(message);
  if (privileged) return privileged;
  const policy = /ValidatingAdmissionPolicy '([^']{1,253})'/.exec(message);
  if (policy) return `spec.template: refused by the ValidatingAdmissionPolicy "${policy[1]}" (${SEE_FOR_YOURSELF})`;
  if (/(maximum|minimum) [a-z-]+ usage per (Container|Pod)|LimitRange/i.test(message)) return `spec.template.spec.containers: outside the namespace's LimitRange (${SEE_FOR_YOURSELF})`;
  return `spec.template: forbidden in this namespace (${SEE_FOR_YOURSELF})`;
}

/** The refusal of a dry-run that the template caused (the API server answered, and not transiently). */
export function refusalReason(err: ApiError): string {
  let reason: string;
  if (err.status === 403) reason = forbiddenReason(err.message);
  else if (err.causes.length > 0) reason = causesReason(err.causes);
  else if (err.status === 400) reason = strictDecodingReason(err.message) ?? `spec.template: ${err.status} ${err.reason}`;
  else reason = `spec.template: ${err.status} ${err.reason} (${SEE_FOR_YOURSELF})`;
  return cut(reason, MAX_REFUSAL_CHARS);
}

/**
 * Validation reasons about a value of the template alone (its syntax, its bounds): their messages say
 * what the template holds, nothing of the namespace. Others (FieldValueForbidden, a policy's own
 * cause) may carry a webhook's or a policy's words.
 */
const TEMPLATE_ONLY_CAUSES = new Set(['FieldValueInvalid', 'FieldValueRequired', 'FieldValueNotFound', 'FieldValueNotSupported', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueDuplicate', 'FieldValueTypeInvalid']);

/**
 * The refusal as told to a caller admission cannot authenticate (no client CA configured, SPEC §2.5):
 * a review's request.namespace is then anyone's, and refusalReason's words — whether a ServiceAccount
 * may be used, the namespace's PodSecurity level, its LimitRange, which webhooks run there — would
 * describe another tenant's namespace to whoever forged it. The field and the rule only: the Status's
 * code and reason, each cause's field and reason (its message when it is about the template's value
 * alone), the unknown fields' names.
 */
export function briefReason(err: ApiError): string {
  let reason: string;
  if (err.causes.length > 0 && err.status !== 403) {
    const shown = err.causes.slice(0, MAX_CAUSES).map((c) => `${neosetField(c.field)}: ${cut(c.reason && TEMPLATE_ONLY_CAUSES.has(c.reason) && c.message ? c.message : c.reason || 'invalid')}`);
    reason = `${shown.join('; ')}${err.causes.length > MAX_CAUSES ? `; and ${err.causes.length - MAX_CAUSES} more` : ''}`;
  } else if (err.status === 400) reason = strictDecodingReason(err.message) ?? `spec.template: ${err.status} ${err.reason}`;
  else reason = `spec.template: ${err.status} ${err.reason} (${SEE_FOR_YOURSELF})`;
  return cut(reason, MAX_REFUSAL_CHARS);
}

/** Why the template could not be checked now, in a few words: no addresses, no server text. */
export function transientReason(err: ApiError | null): string {
  if (err === null) return 'the API server could not be asked';
  if (err.status === 0) return err.reason === 'Aborted' ? 'the API server did not answer in time' : 'the API server is unreachable';
  return `the API server answered ${err.status} ${err.reason}`;
}

/** What the dry-run's failure says of the template: nothing (ok, maybe a warning), a refusal, or that it could not be checked now. */
export function classifyDryRunError(err: unknown): DryRunResult {
  if (!(err instanceof ApiError)) return { ok: false, transient: true, message: transientReason(null), detail: (err as Error)?.message ?? String(err) };
  const detail = err.message;
  // The dry-run got past validation and every admission plugin: only the name is taken (an UPDATE
  // that changed the template, or a leftover pod). The real create happens later, by the controller.
  if (err.status === 409 && err.reason === 'AlreadyExists') return { ok: true };
  // A full ResourceQuota says nothing about the template; pods may fit when they are created. The
  // quota's usage is not ours to repeat.
  if (err.status === 403 && detail.includes('exceeded quota')) {
    return { ok: true, warnings: ["pods of this NeoSet do not fit the namespace's ResourceQuota now"] };
  }
  // Another pod webhook declares sideEffects Unknown or Some, so the API server refuses every dry-run
  // it would match (400 "admission webhook ... does not support dry run"): nothing is known about the
  // template either way. Refusing would block every NeoSet write for a webhook that is not ours.
  if (err.status === 400 && /does not support dry run/.test(detail)) {
    // The API server's fixed sentence (webhookerrors.NewDryRunUnsupportedErr), naming the webhook only.
    const message = cut(err.serverMessage);
    return { ok: true, warnings: [`spec.template: not checked by a dry-run pod create (${message}: it declares sideEffects Unknown or Some); the pods may still be refused when they are created`] };
  }
  // Our own RBAC (dry-run needs `create pods`) or credentials: not the template's fault.
  const ours = err.status === 401 || (err.status === 403 && /cannot create resource/.test(detail));
  if (err.isTransient || ours || err.status === 408) return { ok: false, transient: true, message: transientReason(err), detail };
  return { ok: false, code: err.status, message: refusalReason(err), brief: briefReason(err), detail };
}
