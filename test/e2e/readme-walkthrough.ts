// The walkthrough of README "Run it locally", as a user types it, against any dev stack: kubectl
// apply examples/mysql.yaml, wait for 5 Ready pods on mysql:8.0, patch the image to mysql:8.1, wait
// for the rollout to complete.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { poll } from '../../dev/cluster/wait.ts';

const EXAMPLE = join(new URL('../..', import.meta.url).pathname, 'examples', 'mysql.yaml');

export interface WalkthroughPod {
  metadata: { name: string; uid: string };
  spec: { containers: { image: string }[] };
}

/** kubectl on `kubeconfig`; throws with kubectl's message on a non-zero exit. */
export const kubectlOn = (kubeconfig: string) => (args: string[], input?: string) => {
  const r = spawnSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

/** The README's image patch, in its own words. */
export const imagePatch = (image: string) => JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image }]);

/** Runs the walkthrough; returns the pods before and after the rollout (for identity checks). */
export async function readmeWalkthrough(kubeconfig: string): Promise<{ before: WalkthroughPod[]; after: WalkthroughPod[] }> {
  const k = kubectlOn(kubeconfig);
  const neoset = () => JSON.parse(k(['get', 'neo', 'mysql', '-o', 'json']));
  const pods = () => JSON.parse(k(['get', 'pods', '-l', 'app=mysql', '-o', 'json'])).items as WalkthroughPod[];
  const settled = (phases: string[], image: string) => () => {
    const n = neoset();
    const s = n.status ?? {};
    const done = s.observedGeneration === n.metadata.generation && phases.includes(s.phase) && s.readyReplicas === 5 && s.updatedReplicas === 5 && s.currentImage === image;
    return Promise.resolve(done ? n : undefined);
  };
  k(['apply', '-f', EXAMPLE]);
  await poll('mysql to be ready on mysql:8.0', settled(['Idle'], 'mysql:8.0'), { timeoutMs: 90_000, intervalMs: 250 });
  const before = pods();
  k(['patch', 'neo', 'mysql', '--type', 'json', '-p', imagePatch('mysql:8.1')]);
  await poll('the rollout to mysql:8.1 to complete', settled(['Completed'], 'mysql:8.1'), { timeoutMs: 120_000, intervalMs: 250 });
  return { before, after: pods() };
}
