// What an incoming CloudEvent asks us to look at (SPEC §2: the event is a hint naming an object,
// never a command). Everything acted on is read from the API server afterwards.
import { HTTP, type CloudEvent, type CloudEventV1 } from 'cloudevents';
import { z } from 'zod';
import { KIND, LABEL_NEOSET_NAME } from '../api/names.ts';

export type Target =
  /** Reconcile this NeoSet. */
  | { kind: 'neoset'; namespace: string; name: string }
  /** A Pod of (probably) a NeoSet; `neoset` is known from its label in Resource mode, unknown in Reference mode. */
  | { kind: 'pod'; namespace: string; name: string; neoset: string | null }
  /** A resync tick: every NeoSet. */
  | { kind: 'all' }
  /** Nothing of ours (e.g. a Pod without the NeoSet label). */
  | { kind: 'ignore'; reason: string };

/** A malformed or unsupported event: answered 400 and not redelivered. */
export class BadEventError extends Error {
  readonly status = 400;
  constructor(message: string) {
    super(message);
    this.name = 'BadEventError';
  }
}

const APISERVER_TYPE = /^dev\.knative\.apiserver\.(resource|ref)\.(add|update|delete)$/;
export const PING_TYPE = 'dev.knative.sources.ping';

/** The PingSource knative/eventing.yaml creates, as a PingSource names itself in its ticks' `source`. */
export const DEFAULT_RESYNC_SOURCE = '/apis/v1/namespaces/neoset-system/pingsources/neoset-resync';
/** The environment variable that names another PingSource (an install in another namespace). */
export const RESYNC_SOURCE_VARIABLE = 'NEOSET_RESYNC_SOURCE';

/** The `source` a resync tick must carry (SPEC §2.3): $NEOSET_RESYNC_SOURCE, else the default PingSource's. */
export const resyncSourceFromEnv = (env: NodeJS.ProcessEnv = process.env): string => env[RESYNC_SOURCE_VARIABLE]?.trim() || DEFAULT_RESYNC_SOURCE;

/**
 * The environment variable that names the fast tick (SPEC §2.4, shared/k8s/fast-tick.ts): a PingSource
 * in the resync PingSource's namespace that the reconcile function creates while anything is in flight
 * and deletes at rest. Unset: no fast tick (the resync PingSource ticks every minute itself).
 */
export const FAST_TICK_VARIABLE = 'NEOSET_FAST_TICK';

/** A PingSource, as it names itself in its ticks' `source`. */
export interface PingSourceRef {
  namespace: string;
  name: string;
}

const PING_SOURCE = /^\/apis\/v1\/namespaces\/([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)\/pingsources\/([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)$/;

/** The PingSource a tick's `source` names, or null when it names none. */
export function pingSourceOf(source: string): PingSourceRef | null {
  const m = PING_SOURCE.exec(source);
  return m ? { namespace: m[1], name: m[3] } : null;
}

export const pingSourcePath = (ref: PingSourceRef): string => `/apis/v1/namespaces/${ref.namespace}/pingsources/${ref.name}`;

/** The fast tick $NEOSET_FAST_TICK names, beside the resync PingSource; null when unset. Throws when either cannot be a PingSource's. */
export function fastTickFromEnv(env: NodeJS.ProcessEnv = process.env): { fast: PingSourceRef; resync: PingSourceRef } | null {
  const name = env[FAST_TICK_VARIABLE]?.trim();
  if (!name) return null;
  const resyncSource = resyncSourceFromEnv(env);
  const resync = pingSourceOf(resyncSource);
  if (!resync) throw new Error(`${FAST_TICK_VARIABLE} is set, but ${RESYNC_SOURCE_VARIABLE} (${JSON.stringify(resyncSource)}) names no PingSource (/apis/v1/namespaces/<namespace>/pingsources/<name>)`);
  const fast = pingSourceOf(pingSourcePath({ namespace: resync.namespace, name }));
  if (!fast) throw new Error(`${FAST_TICK_VARIABLE}=${JSON.stringify(name)} is no PingSource name (a DNS subdomain)`);
  if (fast.name === resync.name) throw new Error(`${FAST_TICK_VARIABLE} names the resync PingSource itself (${name}): the fast tick is another one, created and deleted by reconcile`);
  return { fast, resync };
}

/** The sources whose ticks are taken: the resync PingSource's and, when configured, the fast tick's. */
export function tickSourcesFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const ticks = fastTickFromEnv(env);
  return ticks ? [pingSourcePath(ticks.resync), pingSourcePath(ticks.fast)] : [resyncSourceFromEnv(env)];
}

/** How much of a foreign source a skip reason repeats (it is logged; the sender chose it). */
const SHOWN_SOURCE_CHARS = 120;

const Name = z.string().min(1).max(253);
const ResourceData = z.object({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.object({ name: Name, namespace: Name, labels: z.record(z.string(), z.string()).optional() }),
});
const RefData = z.object({ apiVersion: z.string(), kind: z.string(), name: Name, namespace: Name });

export interface ParsedEvent {
  id: string;
  type: string;
  target: Target;
  /**
   * The object a Resource-mode add/update event carries (its state when the event was sent, as the
   * sender claims it); null for a delete, a Reference-mode event or a tick. It may stand in for a read
   * to decide that nothing is to be done; a write is decided from the object read from the API server,
   * or (readiness) on facts of this object that the API server checks in the write itself
   * (shared/k8s/pod-facts.ts; SPEC §2, §2.0).
   */
  object: unknown;
}

export interface ParseOptions {
  /** The `source`s of the only resync ticks taken (default tickSourcesFromEnv()). */
  resyncSource?: string | string[];
}

/** What of a CloudEvent names its target. */
type Attributes = Pick<CloudEventV1<unknown>, 'id' | 'type' | 'source' | 'data'>;

/**
 * Parses a binary- or structured-mode CloudEvent and names its target. Throws BadEventError.
 * `headers`: names in lower case (as the Fetch API's Headers give them).
 */
export function parseEvent(headers: Record<string, string>, body: string, opts: ParseOptions = {}): ParsedEvent {
  const event = plainBinaryEvent(headers, body) ?? sdkEvent(headers, body);
  const sources = opts.resyncSource ?? tickSourcesFromEnv();
  const target = targetOf(event, typeof sources === 'string' ? [sources] : sources);
  const resource = /^dev\.knative\.apiserver\.resource\.(add|update)$/.test(event.type);
  return { id: event.id, type: event.type, target, object: resource ? dataOf(event) : null };
}

/** A binary-mode header that must be a non-empty string when present (the v1 schema's minLength 1). */
const NON_EMPTY = ['ce-id', 'ce-source', 'ce-type', 'ce-subject'];
/** What the fast path takes as `source` (a subset of URI-references: an http(s) origin and/or an absolute path, no escapes). */
const PLAIN_SOURCE = /^(https?:\/\/([A-Za-z0-9.-]+|\[[0-9A-Fa-f:]+\])(:[0-9]{1,5})?)?(\/[A-Za-z0-9._~!$&'()*+,;=:@/-]*)?$/;
const ATTRIBUTE_NAME = /^[a-z0-9]+$/;

/**
 * The events the Broker delivers — binary mode, specversion 1.0, a JSON object as data, plain
 * attributes — read straight from the headers, with one JSON.parse of the body: what the cloudevents
 * SDK would make of them, at a fraction of its cost (it builds two Errors with stack traces, a copy of
 * the headers and a schema validation per event: ~3x the parse; every Pod event reaches both
 * functions, most to be skipped). Anything else — structured mode, another version or content type,
 * an attribute this does not check as the SDK's schema would (a dataschema, a source with escapes) or
 * one that is not well formed — is null: the SDK parses it and gives its verdict, so what is taken or
 * refused, and why, stays the SDK's.
 */
export function plainBinaryEvent(headers: Record<string, string>, body: string): Attributes | null {
  if (headers['ce-specversion'] !== '1.0' || headers['content-type'] !== 'application/json' || body[0] !== '{') return null;
  for (const name in headers) {
    if (name.startsWith('ce-') && !ATTRIBUTE_NAME.test(name.slice(3))) return null;
  }
  if (NON_EMPTY.some((name) => headers[name] === '') || headers['ce-dataschema'] !== undefined) return null;
  // ce-time is not checked: the SDK takes any (one it cannot read becomes the time of the parse), and nothing here uses it.
  const { 'ce-id': id, 'ce-source': source, 'ce-type': type } = headers;
  if (!id || !source || !type || !PLAIN_SOURCE.test(source)) return null;
  try {
    return { id, type, source, data: JSON.parse(body) };
  } catch {
    return null;
  }
}

/** The cloudevents SDK's reading of any event (either mode); its refusal as a BadEventError. */
export function sdkEvent(headers: Record<string, string>, body: string): CloudEventV1<unknown> {
  try {
    const parsed = HTTP.toEvent({ headers, body });
    if (Array.isArray(parsed)) throw new BadEventError('batched CloudEvents are not supported: send one event per request');
    // toEvent does not enforce the required attributes (id, source, type, specversion): validate() does.
    (parsed as CloudEvent<unknown>).validate();
    return parsed as CloudEventV1<unknown>;
  } catch (err) {
    if (err instanceof BadEventError) throw err;
    const detail = (err as { errors?: unknown }).errors;
    throw new BadEventError(`not a valid CloudEvent: ${(err as Error).message}${detail ? ` ${JSON.stringify(detail)}` : ''}`);
  }
}

function targetOf(event: Attributes, tickSources: string[]): Target {
  // A tick costs a LIST of every NeoSet and a reconcile of each: only the configured PingSource's is
  // taken (SPEC §2.3). Anyone who can reach the function can still copy that source — stopping that is
  // the OIDC check's job; this stops anything-goes. Ignored, not refused: the event is well formed, and
  // SPEC §2.1 keeps 4xx for malformed input (a Broker would dead-letter it); nothing redelivery could fix.
  if (event.type === PING_TYPE) {
    if (tickSources.includes(event.source)) return { kind: 'all' };
    const shown = event.source.length > SHOWN_SOURCE_CHARS ? `${event.source.slice(0, SHOWN_SOURCE_CHARS)}…` : event.source;
    return { kind: 'ignore', reason: `resync tick from ${JSON.stringify(shown)}, not the configured PingSource ${tickSources.join(' or ')} (${RESYNC_SOURCE_VARIABLE}, ${FAST_TICK_VARIABLE})` };
  }
  const m = APISERVER_TYPE.exec(event.type);
  if (!m) throw new BadEventError(`unsupported event type "${event.type}": expected dev.knative.apiserver.{resource,ref}.{add,update,delete} or ${PING_TYPE}`);
  const data = dataOf(event);
  const ref = m[1] === 'resource' ? fromResource(data) : fromRef(data);
  if (ref.kind === KIND) return { kind: 'neoset', namespace: ref.namespace, name: ref.name };
  if (ref.kind === 'Pod') {
    if (m[1] === 'resource' && !ref.neoset) return { kind: 'ignore', reason: `pod ${ref.namespace}/${ref.name} has no ${LABEL_NEOSET_NAME} label` };
    return { kind: 'pod', namespace: ref.namespace, name: ref.name, neoset: ref.neoset };
  }
  return { kind: 'ignore', reason: `kind ${ref.kind} is not watched` };
}

function dataOf(event: Attributes): unknown {
  const data = event.data;
  if (typeof data !== 'string' && !(data instanceof Uint8Array)) return data;
  try {
    return JSON.parse(typeof data === 'string' ? data : Buffer.from(data).toString('utf8'));
  } catch {
    throw new BadEventError('data: not JSON (datacontenttype must be application/json)');
  }
}

function fromResource(data: unknown) {
  const r = ResourceData.safeParse(data);
  if (!r.success) throw new BadEventError(`data: not a Kubernetes object: ${fieldErrors(r.error)}`);
  const { kind, metadata } = r.data;
  return { kind, name: metadata.name, namespace: metadata.namespace, neoset: metadata.labels?.[LABEL_NEOSET_NAME] ?? null };
}

function fromRef(data: unknown) {
  const r = RefData.safeParse(data);
  if (!r.success) throw new BadEventError(`data: not an object reference: ${fieldErrors(r.error)}`);
  return { kind: r.data.kind, name: r.data.name, namespace: r.data.namespace, neoset: null };
}

const fieldErrors = (e: z.ZodError) => e.issues.map((i) => `data.${i.path.join('.')}: ${i.message}`).join('; ');
