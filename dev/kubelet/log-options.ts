// What a `/containerLogs/<namespace>/<pod>/<container>` request asks for, parsed from the URL as the
// kubelet does (pkg/kubelet/server/server.go getContainerLogs: v1.PodLogOptions from the query, then
// ValidatePodLogOptions). The URL is an input: every name must be a DNS name before it is looked up,
// every number a bounded whole number; anything else is a 400 with the parameter's name.

import { z } from 'zod';

export interface LogRequest {
  namespace: string;
  pod: string;
  container: string;
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  tailLines?: number;
  limitBytes?: number;
  /** The earliest time (ms) asked for: sinceSeconds before now, or sinceTime. */
  sinceMs?: number;
}

export class LogRequestError extends Error {
  readonly status: 400 | 404 | 422;
  constructor(status: 400 | 404 | 422, message: string) {
    super(message);
    this.status = status;
  }
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
// Pod names are DNS subdomains (dots allowed between labels, 253 characters at most): never `..` or `/`.
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

// Go's strconv.ParseBool, which the parameter codec uses.
const boolean = z.enum(['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False']).transform((v) => ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v));
const whole = z
  .string()
  .regex(/^\d{1,15}$/, 'expected a whole number (at most 15 digits)')
  .transform(Number);

const Query = z.object({
  follow: boolean.optional(),
  previous: boolean.optional(),
  timestamps: boolean.optional(),
  tailLines: whole.optional(),
  limitBytes: whole.pipe(z.number().min(1, 'must be greater than 0')).optional(),
  sinceSeconds: whole.pipe(z.number().min(1, 'must be greater than 0')).optional(),
  sinceTime: z.iso.datetime({ offset: true }).optional(),
  // Stdout and stderr share one file here (container.ts): only both can be served.
  stream: z.literal('All', { error: 'only "All" is served: stdout and stderr are kept in one file' }).optional(),
});

const KNOWN = new Set(Object.keys(Query.shape));

/** The request of `path` + `query`, or a LogRequestError saying what is wrong. */
export function parseLogRequest(path: string, query: URLSearchParams, now: number): LogRequest {
  const parts = path.split('/');
  // '', 'containerLogs', namespace, pod, container
  if (parts.length !== 5 || parts[1] !== 'containerLogs') throw new LogRequestError(404, `no such path: ${path.slice(0, 200)}`);
  const [, , namespace, pod, container] = parts;
  if (!DNS_LABEL.test(namespace)) throw new LogRequestError(400, 'namespace: not a DNS label');
  if (pod.length > 253 || !DNS_SUBDOMAIN.test(pod)) throw new LogRequestError(400, 'pod: not a DNS subdomain');
  if (!DNS_LABEL.test(container)) throw new LogRequestError(400, 'container: not a DNS label');

  const raw: Record<string, string> = {};
  for (const [key, value] of query) {
    // Unknown parameters are ignored, as the parameter codec does; a repeated one is ambiguous.
    const name = key === 'tail' ? 'tailLines' : key;
    if (!KNOWN.has(name)) continue;
    if (name in raw) throw new LogRequestError(400, `${name}: given more than once`);
    if (key === 'tail' && value === 'all') continue; // kubelet's backwards-compatible `tail=all`
    raw[name] = value;
  }
  const parsed = Query.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LogRequestError(400, `${issue.path.join('.')}: ${issue.message}`);
  }
  const q = parsed.data;
  if (q.sinceSeconds !== undefined && q.sinceTime !== undefined) throw new LogRequestError(422, 'at most one of sinceTime or sinceSeconds may be specified');
  const sinceMs = q.sinceSeconds !== undefined ? now - q.sinceSeconds * 1000 : q.sinceTime !== undefined ? Date.parse(q.sinceTime) : undefined;
  return {
    namespace,
    pod,
    container,
    follow: q.follow ?? false,
    previous: q.previous ?? false,
    timestamps: q.timestamps ?? false,
    tailLines: q.tailLines,
    limitBytes: q.limitBytes,
    sinceMs,
  };
}
