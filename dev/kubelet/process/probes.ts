// One probe attempt against a running container, as kubelet's prober makes it: httpGet (success is a
// status in [200, 400), redirects not followed), tcpSocket (a connection opens), exec (the command,
// run inside the container's namespaces, exits 0); each bounded by timeoutSeconds (default 1).
// An exec probe is the pod's own program, run with its environment as kubelet runs it: nsenter (by
// its absolute path, host-tools.ts) looks the command up in the pod's PATH. It runs only for images
// that run a pod's command anyway: a fixedCommand image's pod with one is refused (environment.ts).

import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { V1Container, V1Probe } from '@kubernetes/client-node';
import { hostTool } from './host-tools.ts';
import { node24 } from './image-table.ts';
import { execute } from './network.ts';

export interface ProbeTarget {
  podIP: string;
  container: V1Container;
  /** The container's main process (its namespaces are the exec probe's). */
  pid: number;
  env: Record<string, string>;
}

/** A named port resolved from the container's ports, as kubelet does; undefined when unknown. */
function portOf(port: number | string, container: V1Container): number | undefined {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

/**
 * The request path of an httpGet probe as kubelet's prober makes its URL (url.URL with a host): a path
 * without its leading slash gets one — Knative's adapters are probed at `readiness` and `health`.
 */
export function requestPath(path: string | undefined): string {
  if (!path) return '/';
  return path.startsWith('/') ? path : `/${path}`;
}

export async function probeOnce(probe: V1Probe, target: ProbeTarget): Promise<{ ok: boolean; message: string }> {
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  if (probe.httpGet) {
    const get = probe.httpGet;
    const port = portOf(get.port as number | string, target.container);
    if (port === undefined) return { ok: false, message: `unknown port ${String(get.port)}` };
    const https = get.scheme === 'HTTPS';
    const headers = Object.fromEntries((get.httpHeaders ?? []).map((h) => [h.name, h.value]));
    return new Promise((resolve) => {
      const req = (https ? httpsRequest : httpRequest)(
        {
          host: get.host || target.podIP,
          port,
          path: requestPath(get.path),
          method: 'GET',
          headers: { 'User-Agent': 'kube-probe/1.37', Accept: '*/*', ...headers },
          timeout: timeoutMs,
          rejectUnauthorized: false, // kubelet does not verify a probe's certificate either
        },
        (res) => {
          res.resume();
          const code = res.statusCode ?? 0;
          resolve({ ok: code >= 200 && code < 400, message: `HTTP probe failed with statuscode: ${code}` });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)));
      req.on('error', (err) => resolve({ ok: false, message: `Get ${get.path}: ${err.message}` }));
      req.end();
    });
  }
  if (probe.tcpSocket) {
    const port = portOf(probe.tcpSocket.port as number | string, target.container);
    if (port === undefined) return { ok: false, message: `unknown port ${String(probe.tcpSocket.port)}` };
    return new Promise((resolve) => {
      const socket = connect({ host: probe.tcpSocket!.host || target.podIP, port, timeout: timeoutMs });
      socket.on('connect', () => (socket.destroy(), resolve({ ok: true, message: '' })));
      socket.on('timeout', () => (socket.destroy(), resolve({ ok: false, message: `dial tcp :${port}: i/o timeout` })));
      socket.on('error', (err) => resolve({ ok: false, message: `dial tcp :${port}: ${err.message}` }));
    });
  }
  if (probe.exec?.command?.length) {
    const [program, ...args] = probe.exec.command;
    const r = await execute(hostTool('nsenter'), ['-t', String(target.pid), '-n', '-m', '-u', '--', program === 'node' ? node24() : program, ...args], {
      env: target.env,
      timeoutMs,
    });
    return { ok: r.code === 0, message: r.code === 0 ? '' : `command exited ${r.code}: ${(r.stderr || r.stdout).trim().slice(0, 200)}` };
  }
  return { ok: false, message: 'probe handler not supported here (grpc)' };
}
