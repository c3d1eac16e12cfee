// `kubectl neoset version`: the plugin's version (shared/version.ts), and each installed function's.
// A plugin on a laptop reaches the functions only through the API server, with the user's own RBAC.
// Each function is found where it runs and asked the most direct way that is allowed; what was done
// is said in the FROM column:
//   --function-url NAME=URL: GET URL/healthz itself (`npm run dev -- --bridge`'s processes; a port-forward).
//   a Knative Service neoset-<fn> (knative/reconcile.yaml, readiness.yaml; `view` reads it and its
//     revisions, Knative aggregates them into view): its latest ready revision's /healthz through the
//     API server's service proxy to the revision's private Service (`get services/proxy`: edit or
//     admin in neoset-system). That Service selects the revision's own pods, never the activator, so
//     it cannot wake a revision; one at zero (status.actualReplicas 0) is not asked at all: "scaled to
//     zero" and its image tag. A running pod's queue-proxy counts the request as any other (one
//     request of a few ms in the autoscaler's window). Else the revision's image tag (the ksvc
//     template's while none is ready).
//   a Deployment neoset-<fn> behind the v1 Service of that name (knative/eventing-only/, the default
//     `npm run dev`; admission everywhere): /healthz through the service proxy, else the image tag of
//     the Deployment's template (`view`).
// On a cluster that enforces NetworkPolicy, knative/networkpolicy.yaml lets no API server address in
// to reconcile's and readiness's pods (an address no manifest can know): the proxied request then
// fails or times out (PROBE_TIMEOUT_MS) and the image tag is read instead. A function that cannot be
// asked is "unreachable", with why, and the command still succeeds; only an API server that cannot be
// reached at all is exit 3. Every answer is bounded (a /healthz to MAX_HEALTHZ_BYTES, an object to
// answer-stream.ts's MAX_OBJECT_BYTES) and parsed (zod); a control character in what is printed shows as "?".
import { createHash } from 'node:crypto';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { z } from 'zod';
import { ApiError, type KubeClient } from '../../../shared/k8s/client.ts';
import { ReadRefused, type ByteBudget } from '../../../shared/k8s/read-budget.ts';
import { NEOSET_VERSION } from '../../../shared/version.ts';
import { FUNCTION_NAMES, type FunctionName } from '../args.ts';
import type { Cluster } from '../cluster.ts';
import { describeApiError, EXIT_API, EXIT_OK } from '../errors.ts';
import { formatTable } from '../table.ts';
import type { Io } from './io.ts';

/** Where knative/ installs NeoSet. */
const SYSTEM_NAMESPACE = 'neoset-system';
const PROBE_TIMEOUT_MS = 5000;
/** A /healthz answer is ~60 bytes: anything much larger is not one. */
const MAX_HEALTHZ_BYTES = 4096;

/** A function's /healthz (shared/http/event-app.ts, functions/admission/app.ts); before 0.3.0 it had no version. */
const Healthz = z.object({
  status: z.string().max(64),
  function: z.string().max(64),
  version: z.string().regex(/^[\x21-\x7e]{1,64}$/, 'printable, at most 64 characters').optional(),
});

const Container = z.object({ name: z.string().max(253).optional(), image: z.string().max(1024) });
const PodSpec = z.object({ containers: z.array(Container).min(1).max(100) });
const KnativeService = z.object({
  spec: z.object({ template: z.object({ spec: PodSpec }) }),
  status: z.object({ latestReadyRevisionName: z.string().regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/).optional() }).optional(),
});
/** serving.knative.dev/v1 Revision: its spec is the pod spec it runs; actualReplicas its ready pods. */
const Revision = z.object({ spec: PodSpec, status: z.object({ actualReplicas: z.number().int().min(0).optional() }).optional() });
const Deployment = z.object({ spec: z.object({ template: z.object({ spec: PodSpec }) }) });

export interface FunctionVersion {
  function: FunctionName;
  /** The version; undefined when it could not be read. */
  version?: string;
  /** Where it was read, or why it could not be. */
  from: string;
}

/** The tag of an image reference (registry/name:tag[@digest]), or "untagged". */
export function imageTag(image: string): string {
  const name = image.split('@')[0];
  const colon = name.lastIndexOf(':');
  return colon > name.lastIndexOf('/') ? name.slice(colon + 1) : 'untagged';
}

/** The function's own container (knative/ names it after the function), else the first. */
const imageOf = (spec: z.infer<typeof PodSpec>, fn: FunctionName) => imageTag((spec.containers.find((c) => c.name === fn) ?? spec.containers[0]).image);

/**
 * The private Service Knative Serving makes for a revision (serverlessservice/resources/names:
 * kmeta.ChildName(revision, "-private")): the name and suffix, or past 63 characters the name's first
 * 23, the md5 of the whole name and the suffix.
 */
export function privateServiceName(revision: string): string {
  const suffix = '-private';
  if (revision.length <= 63 - suffix.length) return revision + suffix;
  return revision.slice(0, 63 - 32 - suffix.length) + createHash('md5').update(revision).digest('hex') + suffix;
}

/** What a /healthz answer says of `fn`'s version. */
function fromHealthz(body: unknown, fn: FunctionName, from: string): FunctionVersion {
  const h = Healthz.safeParse(body);
  if (!h.success) return { function: fn, from: `${from}: the answer is not a NeoSet function's /healthz` };
  if (h.data.function !== fn) return { function: fn, from: `${from}: it answers as ${JSON.stringify(h.data.function)}, not ${fn}` };
  return { function: fn, version: h.data.version ?? 'before 0.3.0', from };
}

/** GET URL/healthz: a version is read and nothing is sent, so an https certificate is not verified (the dev stack's is its own CA's). */
export function probeUrl(fn: FunctionName, base: string): Promise<FunctionVersion> {
  const url = new URL('healthz', base.endsWith('/') ? base : `${base}/`);
  const from = `GET ${url.href}`;
  const get = url.protocol === 'https:' ? httpsGet : httpGet;
  return new Promise((resolve) => {
    const failed = (why: string) => resolve({ function: fn, from: `${from}: ${why}` });
    const req = get(url, { timeout: PROBE_TIMEOUT_MS, rejectUnauthorized: false }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (bytes > MAX_HEALTHZ_BYTES) return req.destroy(new Error(`answer over ${MAX_HEALTHZ_BYTES} bytes`));
        chunks.push(c);
      });
      res.on('end', () => {
        if (res.statusCode !== 200) return failed(`answered ${res.statusCode}`);
        try {
          resolve(fromHealthz(JSON.parse(Buffer.concat(chunks).toString('utf8')), fn, from));
        } catch {
          failed('the answer is not JSON');
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${PROBE_TIMEOUT_MS / 1000}s`)));
    req.on('error', (err) => failed(err.message));
  });
}

/** A proxied /healthz past MAX_HEALTHZ_BYTES: its socket is closed as the bytes cross the line (client.ts passes it through). */
class HealthzTooLarge extends ReadRefused {
  constructor(bytes: number) {
    super(`answer over ${MAX_HEALTHZ_BYTES} bytes`, bytes, MAX_HEALTHZ_BYTES, 'none');
    this.name = 'HealthzTooLarge';
  }
}

function healthzBudget(): ByteBudget {
  let held = 0;
  return {
    charge(bytes) {
      if (held + bytes > MAX_HEALTHZ_BYTES) throw new HealthzTooLarge(held + bytes);
      held += bytes;
    },
  };
}

/** One line: an API server without the resource answers a plain-text "404 page not found\n". */
const why = (err: unknown) => (err instanceof ApiError ? describeApiError(err).replace(/^error: /, '') : (err as Error).message).replace(/\s+/g, ' ').trim();

type Read<T> = { ok: true; value: T } | { ok: false; error: unknown };
const isNotFound = (r: Read<unknown>) => !r.ok && r.error instanceof ApiError && r.error.isNotFound;

/** GET an object and parse it; a failure is kept, not thrown: the caller says why. */
async function read<T>(client: KubeClient, path: string, schema: z.ZodType<T>, what: string): Promise<Read<T>> {
  try {
    const parsed = schema.safeParse(await client.request('GET', path, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) }));
    if (parsed.success) return { ok: true, value: parsed.data };
    const issue = parsed.error.issues[0];
    return { ok: false, error: new Error(`the answer is not a ${what}: ${issue.path.join('.') || '(root)'}: ${issue.message}`) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** A Service's /healthz through the API server's service proxy (`scheme:name:port`), bounded. */
async function viaProxy(client: KubeClient, fn: FunctionName, service: string, from: string): Promise<Read<FunctionVersion>> {
  const path = `/api/v1/namespaces/${SYSTEM_NAMESPACE}/services/${service}/proxy/healthz`;
  try {
    const body = await client.request('GET', path, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), budget: healthzBudget() });
    return { ok: true, value: fromHealthz(body, fn, from) };
  } catch (error) {
    return { ok: false, error };
  }
}

const apis = {
  ksvc: (fn: FunctionName) => `/apis/serving.knative.dev/v1/namespaces/${SYSTEM_NAMESPACE}/services/neoset-${fn}`,
  revision: (name: string) => `/apis/serving.knative.dev/v1/namespaces/${SYSTEM_NAMESPACE}/revisions/${name}`,
  deployment: (fn: FunctionName) => `/apis/apps/v1/namespaces/${SYSTEM_NAMESPACE}/deployments/neoset-${fn}`,
};

/** The Knative Service's latest ready revision: asked through its private Service unless it is at zero. */
async function fromKnativeService(client: KubeClient, fn: FunctionName, ksvc: z.infer<typeof KnativeService>): Promise<FunctionVersion> {
  const name = `ksvc ${SYSTEM_NAMESPACE}/neoset-${fn}`;
  const ready = ksvc.status?.latestReadyRevisionName;
  if (!ready) return { function: fn, version: imageOf(ksvc.spec.template.spec, fn), from: `image tag of ${name} (no ready revision)` };
  const revision = await read(client, apis.revision(ready), Revision, 'Knative Revision');
  const of = `revision ${ready} of ${name}`;
  if (revision.ok && revision.value.status?.actualReplicas === 0) {
    return { function: fn, version: imageOf(revision.value.spec, fn), from: `scaled to zero, not woken: image tag of ${of}` };
  }
  const service = privateServiceName(ready);
  const asked = await viaProxy(client, fn, `http:${service}:80`, `/healthz of ${of} through the API server's service proxy (service ${SYSTEM_NAMESPACE}/${service})`);
  if (asked.ok) return asked.value;
  if (revision.ok) return { function: fn, version: imageOf(revision.value.spec, fn), from: `image tag of ${of} (service proxy: ${why(asked.error)})` };
  return { function: fn, version: imageOf(ksvc.spec.template.spec, fn), from: `image tag of ${name} (revision ${ready}: ${why(revision.error)}; service proxy: ${why(asked.error)})` };
}

/** The Deployment behind the v1 Service neoset-<fn>: its /healthz through the service proxy, else its image tag. */
async function fromDeployment(client: KubeClient, fn: FunctionName, deployment: Read<z.infer<typeof Deployment>>, ksvc?: Read<unknown>): Promise<FunctionVersion> {
  const service = `${SYSTEM_NAMESPACE}/neoset-${fn}`;
  // admission serves https on 443 (knative/admission-webhooks.yaml); reconcile and readiness http on 80 (eventing-only/functions.yaml).
  const target = fn === 'admission' ? `https:neoset-${fn}:443` : `http:neoset-${fn}:80`;
  const asked = await viaProxy(client, fn, target, `/healthz through the API server's service proxy (service ${service})`);
  if (asked.ok) return asked.value;
  const name = `deployment ${service}`;
  if (deployment.ok) return { function: fn, version: imageOf(deployment.value.spec.template.spec, fn), from: `image tag of ${name} (service proxy: ${why(asked.error)})` };
  if (ksvc && isNotFound(ksvc) && isNotFound(deployment)) {
    return { function: fn, from: `no ksvc or deployment ${service} (not installed, or run elsewhere, as by npm run dev -- --bridge: pass --function-url)` };
  }
  const ksvcWhy = ksvc && !ksvc.ok ? `ksvc ${service}: ${why(ksvc.error)}; ` : '';
  return { function: fn, from: `${ksvcWhy}${name}: ${why(deployment.error)}; service proxy: ${why(asked.error)}` };
}

/** Finds `fn` as a Knative Service, else as a Deployment + Service (admission is always the latter). */
async function inCluster(client: KubeClient, fn: FunctionName): Promise<FunctionVersion> {
  const [ksvc, deployment] = await Promise.all([
    fn === 'admission' ? undefined : read(client, apis.ksvc(fn), KnativeService, 'Knative Service'),
    read(client, apis.deployment(fn), Deployment, 'Deployment'),
  ]);
  if (ksvc?.ok) return fromKnativeService(client, fn, ksvc.value);
  return fromDeployment(client, fn, deployment, ksvc);
}

/** A table cell from what a cluster or a function said: no control characters reach the terminal. */
const printable = (text: string) => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');

export interface VersionOptions {
  /** Only the plugin's version: no cluster. */
  client: boolean;
  functionUrls: Partial<Record<FunctionName, string>>;
}

export async function version(connect: () => Cluster, opts: VersionOptions, io: Io): Promise<number> {
  io.out.write(`Plugin version: ${NEOSET_VERSION}\n`);
  if (opts.client) return EXIT_OK;
  const toAsk = FUNCTION_NAMES.filter((fn) => opts.functionUrls[fn] === undefined);
  let client: KubeClient | undefined;
  if (toAsk.length > 0) {
    client = connect().client;
    try {
      // Open to every user (system:public-info-viewer): whether the API server answers at all.
      await client.request('GET', '/version', { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status === 0) {
        io.err.write(`${err instanceof ApiError ? describeApiError(err) : `error: ${(err as Error).message}`}\n`);
        return EXIT_API;
      }
    }
  }
  const versions = await Promise.all(
    FUNCTION_NAMES.map((fn) => {
      const url = opts.functionUrls[fn];
      return url !== undefined ? probeUrl(fn, url) : inCluster(client!, fn);
    }),
  );
  io.out.write(formatTable([['FUNCTION', 'VERSION', 'FROM'], ...versions.map((v) => [v.function, printable(v.version ?? 'unreachable'), printable(v.from)])]));
  return EXIT_OK;
}
