// The fault proxy (fault-proxy.ts) as a process of its own, adding a fixed delay to every request and
// failing none: a slow API server whose cost is not the tested process's (in a cluster the API
// server's latency is no part of the function's CPU). Prints `url <url>` once listening and
// `request <method> <path>` for each request; stops on SIGTERM. argv: <kubeconfig> <delay ms>.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { proxyKubeconfigYaml, startFaultProxy } from './fault-proxy.ts';

export interface DelayProxy {
  url: string;
  /** Each request as the proxy received it: `<method> <path>`. */
  requests: string[];
  kubeconfigYaml(): string;
  stop(): Promise<void>;
}

/** Starts the proxy process in front of the API server of `kubeconfig` (a file). */
export async function startDelayProxy(kubeconfig: string, delayMs: number): Promise<DelayProxy> {
  const child: ChildProcess = spawn(process.execPath, [fileURLToPath(import.meta.url), kubeconfig, String(delayMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const requests: string[] = [];
  const listening = Promise.withResolvers<string>();
  child.once('exit', (code) => listening.reject(new Error(`delay proxy exited (${code}) before listening`)));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('request ')) requests.push(line.slice('request '.length));
    else if (line.startsWith('url ')) listening.resolve(line.slice('url '.length));
  });
  const url = await listening.promise;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url,
    requests,
    kubeconfigYaml: () => proxyKubeconfigYaml(url),
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [kubeconfig, delay] = process.argv.slice(2);
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const proxy = await startFaultProxy({ kubeConfig: kc, seed: 0, rate: 0, delayMs: Number(delay), onRequest: (method, path) => process.stdout.write(`request ${method} ${path}\n`) });
  process.stdout.write(`url ${proxy.url}\n`);
  process.once('SIGTERM', () => void proxy.stop().then(() => process.exit(0)));
}
