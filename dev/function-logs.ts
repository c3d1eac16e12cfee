// What `npm run dev` on the real Knative prints of its functions: one line per invocation that wrote
// something, as --bridge prints its processes' (dev/log-view.ts), read from the function pods' log
// files. The process-mode kubelet keeps a container's log of its Nth run in
// <its node's state directory>/pods/<pod uid>/logs/<container>/<N>.log (dev/kubelet/process/pods.ts);
// the node's is the neoset<index> directory this process owns. The function pods come and go — on the
// Serving layout readiness scales to zero and back, a new revision brings new pods, a restart a new
// run — so they are listed again every few seconds: a new pod's (or run's) file is followed from its
// first line, a gone pod's files are dropped.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import type { ControlPlane } from './cluster/control-plane.ts';
import { STATE_ROOT } from './kubelet/process/network.ts';
import { followFile, formatLogLine } from './log-view.ts';
import { SYSTEM_NAMESPACE } from './manifests.ts';

const FUNCTIONS = ['reconcile', 'readiness', 'admission'] as const;
/** How often the function pods are listed again. */
const RELIST_MS = 2000;

/** Follows the function pods' logs until the returned stop(); the pods there now are followed before it resolves. */
export async function followFunctionLogs(cp: ControlPlane, verbose: boolean, log: (line: string) => void): Promise<() => void> {
  const nodes = readdirSync(STATE_ROOT).filter((d) => /^neoset\d+$/.test(d) && readFileSync(join(STATE_ROOT, d, 'owner'), 'utf8').trim() === String(process.pid));
  const core = cp.kubeConfig().makeApiClient(CoreV1Api);
  /** Followed files by pod uid, each file's stop by its path. */
  const followed = new Map<string, Map<string, () => void>>();
  let stopped = false;
  const look = async () => {
    const pods = (await core.listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: `app.kubernetes.io/component in (${FUNCTIONS.join(',')})` })).items;
    if (stopped) return; // a list answered after stop(): nothing more is followed
    const uids = new Set(pods.map((p) => p.metadata!.uid!));
    for (const [uid, files] of followed) {
      if (uids.has(uid)) continue;
      for (const stop of files.values()) stop();
      followed.delete(uid);
    }
    for (const pod of pods) {
      const fn = pod.metadata!.labels!['app.kubernetes.io/component'];
      // The function's container: the first (Knative Serving appends queue-proxy after it).
      const container = pod.spec!.containers[0].name;
      const run = pod.status?.containerStatuses?.find((s) => s.name === container)?.restartCount ?? 0;
      const files = followed.get(pod.metadata!.uid!) ?? new Map<string, () => void>();
      followed.set(pod.metadata!.uid!, files);
      for (const node of nodes) {
        const path = join(STATE_ROOT, node, 'pods', pod.metadata!.uid!, 'logs', container, `${run}.log`);
        if (files.has(path)) continue;
        files.set(
          path,
          followFile(path, (line) => {
            const text = formatLogLine(fn, line, verbose);
            if (text) log(text);
          }),
        );
      }
    }
  };
  await look();
  // A failed list (the API server busy) is tried again at the next one.
  const timer = setInterval(() => void look().catch(() => {}), RELIST_MS);
  return () => {
    stopped = true;
    clearInterval(timer);
    for (const files of followed.values()) for (const stop of files.values()) stop();
    followed.clear();
  };
}
