// The admission function (SPEC §5): POST /mutate fills defaults, POST /validate judges, both taking
// an admission.k8s.io/v1 AdmissionReview. The judging is in shared/admission; this file parses at the
// boundary, calls it, runs the one dry-run it asks for, and answers. Never a 5xx: a body that is not
// an AdmissionReview gets 400; anything else gets an AdmissionReview (allowed=false with the reason
// when it cannot be judged).
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
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
import type { DryRunPod } from './dry-run.ts';
import { admissionRequests, registry } from './metrics.ts';
import {
  AdmissionRequest,
  ReviewEnvelope,
  Scale,
  cleanWarnings,
  describeIssues,
  reviewResponse,
  type AdmissionResponse,
} from './review.ts';

export type { DryRunPod, DryRunResult } from './dry-run.ts';

export interface AdmissionDeps {
  /** Server-side dry-run create of a Pod (apiDryRunPod in production, a stub in tests). */
  dryRunPod: DryRunPod;
  limits?: AdmissionLimits;
  logger?: Logger;
}

/** An AdmissionReview carries the object and the old object, each up to etcd's 1.5 MiB, plus slack. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** Real NeoSets nest about 25 levels; deeper input is refused before anything walks it. */
export const MAX_DEPTH = 100;

type Webhook = 'mutate' | 'validate';

const allow = (uid: string, warnings: string[] = []): AdmissionResponse => ({ uid, allowed: true, warnings: cleanWarnings(warnings) });

/** Refusals carry no warnings: doubtful settings are worth a word only on an object that is stored. */
const deny = (uid: string, code: number, reason: string, message: string): AdmissionResponse => ({
  uid,
  allowed: false,
  status: { code, reason, message: message.length > 4000 ? `${message.slice(0, 3999)}…` : message },
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

async function validate(req: AdmissionRequest, deps: Required<AdmissionDeps>): Promise<AdmissionResponse> {
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
    const namespace = req.namespace ?? parsed.data.metadata.namespace ?? 'default';
    verdict = judgeNeoSet({ namespace, neoset: parsed.data, old }, deps.limits);
    verdict.warnings.unshift(...warnings);
  } else {
    return cannotJudge(req.uid, what);
  }
  const { issues, warnings, dryRunPod } = verdict;
  if (issues.length > 0) {
    const forbidden = issues.some((i) => i.forbidden);
    return deny(req.uid, forbidden ? 403 : 422, forbidden ? 'Forbidden' : 'Invalid', issues.map(renderIssue).join('; '));
  }
  if (dryRunPod !== null) {
    const result = await deps.dryRunPod(dryRunPod);
    const pod = dryRunPod.metadata.name;
    if (!result.ok && result.transient) {
      return deny(req.uid, 503, 'ServiceUnavailable', `spec.template: cannot check the pod template now (dry-run create of pod ${pod} failed: ${result.message}); retry`);
    }
    if (!result.ok) {
      return deny(req.uid, result.code ?? 422, 'Invalid', `spec.template: the API server refuses ordinal 0's pod: ${result.message}`);
    }
    warnings.push(...(result.warnings ?? []));
  }
  return allow(req.uid, warnings);
}

export function createApp(deps: AdmissionDeps): Hono {
  const full: Required<AdmissionDeps> = {
    dryRunPod: deps.dryRunPod,
    limits: deps.limits ?? DEFAULT_LIMITS,
    logger: deps.logger ?? createLogger('admission'),
  };
  const log = full.logger;
  const app = new Hono();
  app.get('/healthz', (c) => c.json({ status: 'ok', function: 'admission' }));
  app.get('/metrics', async (c) => c.text(await registry.metrics(), 200, { 'Content-Type': registry.contentType }));

  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => c.json({ error: `body over ${MAX_BODY_BYTES} bytes` }, 413),
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
        response = webhook === 'mutate' ? mutate(request) : await validate(request, full);
      }
    } catch (err) {
      // A bug in the judging: refuse the write with the reason rather than answer 500 (SPEC §5).
      log.error({ uid, err }, 'admission failed');
      response = deny(uid, 500, 'InternalError', `admission failed: ${(err as Error)?.message ?? String(err)}`);
    }
    done(200, {
      uid,
      operation: request?.operation,
      resource: request ? `${request.resource.resource}${request.subResource ? `/${request.subResource}` : ''}` : undefined,
      namespace: request?.namespace,
      name: request?.name,
      dryRun: request?.dryRun,
      allowed: response.allowed,
      reason: response.status?.message,
      patched: response.patch !== undefined,
      warnings: response.warnings?.length ?? 0,
    });
    return c.json(reviewResponse(response));
  }

  app.post('/mutate', limit, (c) => answer(c, 'mutate'));
  app.post('/validate', limit, (c) => answer(c, 'validate'));
  // Whatever escapes the handlers (say, a body stream that breaks) is the request's failure, not a 500.
  app.onError((err, c) => c.json({ error: `cannot read the request: ${err.message}` }, 400));
  return app;
}
