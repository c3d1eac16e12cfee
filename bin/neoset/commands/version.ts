// `kubectl neoset version`: the plugin's version (shared/version.ts), and what it can learn of the
// installed functions'. A plugin on a laptop reaches the functions only through the API server, with
// the user's own RBAC, so each function is asked the most direct way that is allowed:
//   --function-url NAME=URL: GET URL/healthz itself (the dev stack's local processes; a port-forward);
//   admission: its /healthz through the API server's service proxy (get services/proxy in
//     neoset-system: `edit` or `admin` there), else the image tag of its Deployment (`view` there);
//   reconcile, readiness: the image tag of their Knative Service's template and its latest ready
//     revision (`view` in neoset-system; Knative aggregates its resources into view) — the version
//     deployed, not asked of a running instance: Knative's Services route through its ingress, which
//     the service proxy cannot follow.
// A function that cannot be asked is "unreachable", with why, and the command still succeeds; only an
// API server that cannot be reached at all is exit 3. Every answer is bounded and parsed (zod).
import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { z } from 'zod';
import { ApiError, type KubeClient } from '../../../shared/k8s/client.ts';
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
const Healthz = z.object({ status: z.string().max(64), function: z.string().max(64), version: z.string().max(64).optional() });

const Image = z.object({ image: z.string().max(1024) });
const KnativeService = z.object({
  spec: z.object({ template: z.object({ spec: z.object({ containers: z.array(Image).min(1) }) }) }),
  status: z.object({ latestReadyRevisionName: z.string().max(253).optional() }).optional(),
});
const Deployment = z.object({ spec: z.object({ template: z.object({ spec: z.object({ containers: z.array(Image).min(1) }) }) }) });

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

/** One line: an API server without the resource answers a plain-text "404 page not found\n". */
const why = (err: unknown) => (err instanceof ApiError ? describeApiError(err).replace(/^error: /, '') : (err as Error).message).replace(/\s+/g, ' ').trim();

async function probeAdmission(client: KubeClient): Promise<FunctionVersion> {
  const proxy = `/api/v1/namespaces/${SYSTEM_NAMESPACE}/services/https:neoset-admission:443/proxy/healthz`;
  let proxyError: unknown;
  try {
    const body = await client.request('GET', proxy, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    return fromHealthz(body, 'admission', `/healthz through the API server's service proxy (service ${SYSTEM_NAMESPACE}/neoset-admission)`);
  } catch (err) {
    proxyError = err;
  }
  const deployment = `deployment ${SYSTEM_NAMESPACE}/neoset-admission`;
  try {
    const d = Deployment.parse(await client.request('GET', `/apis/apps/v1/namespaces/${SYSTEM_NAMESPACE}/deployments/neoset-admission`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) }));
    return { function: 'admission', version: imageTag(d.spec.template.spec.containers[0].image), from: `image tag of ${deployment} (service proxy: ${why(proxyError)})` };
  } catch (err) {
    return { function: 'admission', from: `service proxy: ${why(proxyError)}; ${deployment}: ${why(err)}` };
  }
}

async function probeKnativeService(client: KubeClient, fn: 'reconcile' | 'readiness'): Promise<FunctionVersion> {
  const name = `ksvc ${SYSTEM_NAMESPACE}/neoset-${fn}`;
  try {
    const ksvc = KnativeService.parse(await client.request('GET', `/apis/serving.knative.dev/v1/namespaces/${SYSTEM_NAMESPACE}/services/neoset-${fn}`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) }));
    const revision = ksvc.status?.latestReadyRevisionName;
    return { function: fn, version: imageTag(ksvc.spec.template.spec.containers[0].image), from: `image tag of ${name}${revision ? ` (latest ready revision ${revision})` : ' (no ready revision)'}` };
  } catch (err) {
    const hint = err instanceof ApiError && err.isNotFound ? ' (not installed from knative/? on the dev stack, pass --function-url)' : '';
    return { function: fn, from: `${name}: ${why(err)}${hint}` };
  }
}

export interface VersionOptions {
  /** Only the plugin's version: no cluster. */
  client: boolean;
  functionUrls: Partial<Record<FunctionName, string>>;
}

export async function version(connect: () => Cluster, opts: VersionOptions, io: Io): Promise<number> {
  io.out.write(`Plugin version: ${NEOSET_VERSION}\n`);
  if (opts.client) return EXIT_OK;
  const inCluster = FUNCTION_NAMES.filter((fn) => opts.functionUrls[fn] === undefined);
  let client: KubeClient | undefined;
  if (inCluster.length > 0) {
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
      if (url !== undefined) return probeUrl(fn, url);
      return fn === 'admission' ? probeAdmission(client!) : probeKnativeService(client!, fn);
    }),
  );
  io.out.write(formatTable([['FUNCTION', 'VERSION', 'FROM'], ...versions.map((v) => [v.function, v.version ?? 'unreachable', v.from])]));
  return EXIT_OK;
}
