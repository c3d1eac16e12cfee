// The admission function (SPEC §5): POST /mutate fills defaults, POST /validate judges, both taking
// an admission.k8s.io/v1 AdmissionReview. The judging is in shared/admission; this file parses at the
// boundary, calls it, runs the one dry-run it asks for, and answers. Never a 5xx: a body that is not
// an AdmissionReview gets 400; anything else gets an AdmissionReview (allowed=false with the reason
// when it cannot be judged).
//
// Who may call it (SPEC §2.3): with a client CA configured (TLS_CLIENT_CA_FILE), only a caller whose
// certificate chains to it — the API server, given client credentials for webhooks by its
// --admission-control-config-file — gets past 401. Whoever calls, every body is bounded before it is
// read, the reviews in flight are bounded in bytes, the dry-runs in number, each dry-run is aborted at
// its deadline, and a refusal repeats no more of the API server's answer than a field and a reason.
// Without a client CA nobody is authenticated, and a review's request.namespace is anyone's: the
// answers then say nothing that another namespace's state decides (SPEC §2.5) — see `told`.
import { Hono, type Context } from 'hono';
import { bodyBudget, boundedBody } from '../../shared/http/body-budget.ts';
import { clientCertOf, requireClientCert } from '../../shared/http/client-cert.ts';
import type { Logger } from 'pino';
import { createLogger } from '../../shared/http/logger.ts';
import { GROUP, KIND, PLURAL, VERSION } from '../../shared/api/names.ts';
import { NeoSet } from '../../shared/api/neoset.ts';
import { defaultsPatch } from '../../shared/admission/defaults.ts';
import { renderIssue } from '../../shared/admission/issue.ts';
import { judgeNeoSet, judgeScale, type Verdict } from '../../shared/admission/judge.ts';
import { isPlainObject } from '../../shared/core/json.ts';
import { jsonDepth } from '../../shared/admission/json.ts';
import { DEFAULT_LIMITS, type AdmissionLimits } from '../../shared/admission/limits.ts';
import { DRY_RUN_TIMEOUT_MS, type DryRunPod } from './dry-run.ts';
import { createDryRunSlots, type DryRunSlots } from './dry-run-slots.ts';
import { addDataFormatVerdict, type ReadFormatsRan } from './data-format.ts';
import { cut } from '../../shared/admission/dry-run-refusal.ts';
import { admissionRequests, registry } from './metrics.ts';
import { recordBuildInfo } from '../../shared/metrics/registry.ts';
import { NEOSET_VERSION } from '../../shared/version.ts';
import {
  AdmissionRequest,
  ReviewEnvelope,
  Scale,
  cleanWarnings,
  describeIssues,
  reviewResponse,
  type AdmissionResponse,
} from './review.ts';

export type { DryRunPod } from './dry-run.ts';

export interface AdmissionDeps {
  /** Server-side dry-run create of a Pod (apiDryRunPod in production, a stub in tests). */
  dryRunPod: DryRunPod;
  limits?: AdmissionLimits;
  logger?: Logger;
  /** The bound on dry-runs in flight (default: DRY_RUN_SLOTS, DRY_RUN_QUEUE). */
  slots?: DryRunSlots;
  /** Deadline of a review's dry-run, wait for a slot included (default DRY_RUN_TIMEOUT_MS). */
  dryRunTimeoutMs?: number;
  /** What the NeoSet's pods ran (apiReadFormatsRan in production); default: nothing read, no format ran. */
  readFormatsRan?: ReadFormatsRan;
}

const MiB = 1024 * 1024;
/**
 * An AdmissionReview of a NeoSet carries the object and, on UPDATE, the old object: each at most
 * etcd's 1.5 MiB (--max-request-bytes; the stored old object cannot be larger, and a new object past
 * it would be refused by etcd anyway), plus the envelope (uid, kind, userInfo, options: a few KiB).
 * Real ones are 5-50 KiB.
 */
export const MAX_BODY_BYTES = 3.5 * MiB;
/**
 * The bytes of reviews one instance holds at once, and how many. A parsed review costs up to ~6x its
 * body (the bytes, the string, JSON.parse's objects, the zod copies of object and oldObject; 3 MiB
 * of the densest NeoSet JSON — 100k env entries — measured 13 MiB of heap), so 8 MiB of bodies (two
 * maximal reviews, or 64 ordinary ones) is at most ~50 MiB of heap, plus at most DRY_RUN_SLOTS Pod
 * bodies in flight (8 x 1.5 MiB): ~60 MiB over a process measured at 38 MiB of heap in use and
 * 167 MiB RSS once client-node is loaded (Node 24, from source): ~230 MiB in the worst case, under
 * the 256 Mi limit of knative/admission.yaml. Unbounded, 8 MiB bodies x any number in flight were not.
 */
export const BODY_BUDGET_BYTES = 8 * MiB;
export const MAX_REVIEWS_IN_FLIGHT = 64;
/** What a refusal's message may hold: our own issues joined, or a short reason of the API server's. */
const MAX_MESSAGE_CHARS = 2000;
/** Real NeoSets nest about 25 levels; deeper input is refused before anything walks it. */
export const MAX_DEPTH = 100;

type Webhook = 'mutate' | 'validate';

const allow = (uid: string, warnings: string[] = []): AdmissionResponse => ({ uid, allowed: true, warnings: cleanWarnings(warnings) });

/** Refusals carry no warnings: doubtful settings are worth a word only on an object that is stored. */
const deny = (uid: string, code: number, reason: string, message: string): AdmissionResponse => ({
  uid,
  allowed: false,
  status: { code, reason, message: cut(message, MAX_MESSAGE_CHARS) },
});

const cannotJudge = (uid: string, why: string) => deny(uid, 400, 'BadRequest', `cannot judge this AdmissionReview: ${why}`);

/** A review of a NeoSet (the version we serve), or of its scale subresource, or something else. */
function target(req: AdmissionRequest): 'neoset' | 'scale' | string {
  if (req.resource.group === GROUP && req.resource.resource === PLURAL && req.subResource === 'scale') return 'scale';
  if (req.kind.group === GROUP && req.kind.kind === KIND && req.kind.version === VERSION && !req.subResource) return 'neoset';
  return `expected ${GROUP}/${VERSION} ${KIND}, got ${req.kind.group || 'core'}/${req.kind.version} ${req.kind.kind}${req.subResource ? ` (subresource ${req.subResource})` : ''}`;
}

function mutate(req: AdmissionRequest): AdmissionResponse {
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return allow(req.uid);
  const what = target(req);
  if (what === 'scale') return allow(req.uid);
  if (what !== 'neoset') return cannotJudge(req.uid, what);
  if (!isPlainObject(req.object)) return cannotJudge(req.uid, 'request.object: expected the NeoSet');
  const patch = defaultsPatch(req.object);
  if (patch.length === 0) return allow(req.uid);
  return { uid: req.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') };
}

/**
 * What a review's answer may tell its caller. `namespace`: a caller whose client certificate chains
 * to the configured CA — the API server, whose request.namespace is the namespace being written to,
 * by a user who may write there — is told what the dry-run and the data-format reads found there.
 * `rule`: any other caller (no client CA configured: nobody is authenticated) names a namespace at
 * will, so it is told the field and the rule only — never the pods, formats, quota, ServiceAccounts,
 * PodSecurity level or webhooks the API server showed us of that namespace.
 */
type Told = 'namespace' | 'rule';

async function validate(req: AdmissionRequest, deps: Required<AdmissionDeps>, told: Told): Promise<AdmissionResponse> {
  const log = deps.logger;
  // Only CREATE and UPDATE are registered; a deletion has nothing to refuse.
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return allow(req.uid);
  const what = target(req);
  let verdict: Verdict;
  if (what === 'scale') {
    const scale = Scale.safeParse(req.object);
    if (!scale.success) return cannotJudge(req.uid, describeIssues(scale.error, ['request', 'object']));
    const old = req.operation === 'UPDATE' ? Scale.safeParse(req.oldObject) : null;
    verdict = judgeScale(scale.data.spec?.replicas ?? 0, old?.success ? (old.data.spec?.replicas ?? null) : null, deps.limits);
  } else if (what === 'neoset') {
    const parsed = NeoSet.safeParse(req.object);
    if (!parsed.success) return deny(req.uid, 422, 'Invalid', describeIssues(parsed.error));
    const warnings: string[] = [];
    let old = null;
    if (req.operation === 'UPDATE') {
      const oldParsed = NeoSet.safeParse(req.oldObject);
      if (oldParsed.success) old = oldParsed.data;
      else warnings.push(`the stored NeoSet does not parse (${describeIssues(oldParsed.error, [], 1)}): immutable fields were not checked`);
    }
    // The namespace the API server names, never the object's own claim: with client certificates
    // required, only the API server can name one, and it names the namespace being written to.
    if (!req.namespace) return cannotJudge(req.uid, 'request.namespace: missing (a NeoSet is namespaced)');
    const review = { namespace: req.namespace, neoset: parsed.data, old };
    verdict = judgeNeoSet(review, deps.limits);
    verdict.warnings.unshift(...warnings);
    // SPEC §4.7: no lower data format on pods that ran a higher one (reads the pods and revisions).
    const unchecked = await addDataFormatVerdict(verdict, review, deps.readFormatsRan, log, told === 'namespace');
    if (unchecked !== null) return deny(req.uid, 503, 'ServiceUnavailable', unchecked);
  } else {
    return cannotJudge(req.uid, what);
  }
  const { issues, warnings, dryRunPod } = verdict;
  if (issues.length > 0) {
    const forbidden = issues.some((i) => i.forbidden);
    return deny(req.uid, forbidden ? 403 : 422, forbidden ? 'Forbidden' : 'Invalid', issues.map(renderIssue).join('; '));
  }
  if (dryRunPod !== null) {
    // One deadline for the wait for a slot and the call: the request is aborted with it.
    const signal = AbortSignal.timeout(deps.dryRunTimeoutMs);
    const result = await deps.slots.run(signal, () => deps.dryRunPod(dryRunPod, signal));
    if (result === 'busy') {
      log.warn({ uid: req.uid, inFlight: deps.slots.inFlight, waiting: deps.slots.waiting }, 'dry-run slots full');
      return deny(req.uid, 429, 'TooManyRequests', 'spec.template: cannot check the pod template now (admission is busy checking others); retry');
    }
    if (!result.ok) log.warn({ uid: req.uid, namespace: req.namespace, transient: result.transient ?? false, detail: result.detail }, 'dry-run refused');
    if (!result.ok && result.transient) {
      return deny(req.uid, 503, 'ServiceUnavailable', `spec.template: cannot check the pod template now (${result.message}); retry`);
    }
    if (!result.ok) {
      const why = told === 'namespace' ? result.message : (result.brief ?? 'spec.template: refused (a dry-run create of the pod shows why)');
      return deny(req.uid, result.code ?? 422, 'Invalid', `the API server refuses ordinal 0's pod: ${why}`);
    }
    // Its warnings describe the namespace (its ResourceQuota, the webhooks that run there).
    if (told === 'namespace') warnings.push(...(result.warnings ?? []));
  }
  return allow(req.uid, warnings);
}

export function createApp(deps: AdmissionDeps): Hono {
  const full: Required<AdmissionDeps> = {
    dryRunPod: deps.dryRunPod,
    limits: deps.limits ?? DEFAULT_LIMITS,
    logger: deps.logger ?? createLogger('admission'),
    slots: deps.slots ?? createDryRunSlots(),
    dryRunTimeoutMs: deps.dryRunTimeoutMs ?? DRY_RUN_TIMEOUT_MS,
    readFormatsRan: deps.readFormatsRan ?? (async () => []),
  };
  const log = full.logger;
  const app = new Hono();
  recordBuildInfo('admission');
  app.get('/healthz', (c) => c.json({ status: 'ok', function: 'admission', version: NEOSET_VERSION }));
  app.get('/metrics', async (c) => c.text(await registry.metrics(), 200, { 'Content-Type': registry.contentType }));

  // The order matters: the caller first (nothing of a stranger's body is read), then room for the
  // body, then its size.
  const caller = requireClientCert((c, why) => {
    log.warn({ path: c.req.path, why }, 'admission refused: no client certificate of the configured CA');
    return c.json({ error: `a client certificate of the configured CA is required (${why})` }, 401);
  });
  const budget = bodyBudget({
    budgetBytes: BODY_BUDGET_BYTES,
    maxBodyBytes: MAX_BODY_BYTES,
    maxRequests: MAX_REVIEWS_IN_FLIGHT,
    onBusy: (c, inFlight) => {
      log.warn({ path: c.req.path, ...inFlight }, 'admission busy: reviews in flight at the bound');
      c.header('Retry-After', '1');
      return c.json({ error: `${inFlight.requests} reviews (${Math.round(inFlight.bytes / 1024)} KiB) in flight: retry` }, 429);
    },
  });
  const limit = boundedBody({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => {
      log.warn({ path: c.req.path, limit: MAX_BODY_BYTES }, 'admission refused: body too large');
      return c.json({ error: `body over ${MAX_BODY_BYTES} bytes` }, 413);
    },
  });

  async function answer(c: Context, webhook: Webhook): Promise<Response> {
    const started = performance.now();
    const done = (status: number, fields: Record<string, unknown>) => {
      const allowed = fields.allowed === true ? 'true' : 'false';
      admissionRequests.inc({ webhook, operation: String(fields.operation ?? 'unknown'), allowed });
      log.info({ webhook, status, ms: Math.round((performance.now() - started) * 10) / 10, ...fields }, 'admission');
    };
    const bad = (error: string) => {
      done(400, { error });
      return c.json({ error }, 400);
    };
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch (err) {
      return bad(`body is not JSON: ${(err as Error).message}`);
    }
    const envelope = ReviewEnvelope.safeParse(body);
    if (!envelope.success) return bad(`not an admission.k8s.io/v1 AdmissionReview: ${describeIssues(envelope.error, [], 5)}`);
    const uid = envelope.data.request.uid;
    let response: AdmissionResponse;
    let request: AdmissionRequest | undefined;
    try {
      const parsed = AdmissionRequest.safeParse(envelope.data.request);
      if (!parsed.success) response = cannotJudge(uid, describeIssues(parsed.error, ['request'], 5));
      else if (jsonDepth(parsed.data) > MAX_DEPTH) response = cannotJudge(uid, `request nested deeper than ${MAX_DEPTH} levels`);
      else {
        request = parsed.data;
        response = webhook === 'mutate' ? mutate(request) : await validate(request, full, clientCertOf(c)?.verified === true ? 'namespace' : 'rule');
      }
    } catch (err) {
      // A bug in the judging: refuse the write with the reason rather than answer 500 (SPEC §5).
      log.error({ uid, err }, 'admission failed');
      response = deny(uid, 500, 'InternalError', `admission failed: ${cut((err as Error)?.message ?? String(err))}`);
    }
    done(200, {
      uid,
      operation: request?.operation,
      resource: request ? `${request.resource.resource}${request.subResource ? `/${request.subResource}` : ''}` : undefined,
      namespace: request?.namespace,
      name: request?.name,
      dryRun: request?.dryRun,
      caller: clientCertOf(c)?.subject,
      allowed: response.allowed,
      reason: response.status?.message,
      patched: response.patch !== undefined,
      warnings: response.warnings?.length ?? 0,
    });
    return c.json(reviewResponse(response));
  }

  app.post('/mutate', caller, budget, limit, (c) => answer(c, 'mutate'));
  app.post('/validate', caller, budget, limit, (c) => answer(c, 'validate'));
  // Whatever escapes the handlers (say, a body stream that breaks) is the request's failure, not a 500.
  app.onError((err, c) => c.json({ error: `cannot read the request: ${err.message}` }, 400));
  return app;
}
