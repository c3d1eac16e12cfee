// `npx node examples/hooks/server.ts` (KUBECONFIG; NAMESPACE default "default"; NEOSET default "mysql";
// PORT default 8090; HOST default 127.0.0.1, 0.0.0.0 in a pod): the hook owner of examples/hooks, guarding
// the pods every 2 s.
import { KubeConfig } from '@kubernetes/client-node';
import { serve } from '@hono/node-server';
import { createKubeClient } from '../../shared/k8s/client.ts';
import { createHookApp } from './function.ts';
import { createOwner, guardEvery } from './owner.ts';

const kc = new KubeConfig();
kc.loadFromDefault();
const namespace = process.env.NAMESPACE ?? 'default';
const owner = createOwner(createKubeClient(kc), namespace, process.env.NEOSET ?? 'mysql');
const log = (line: string) => process.stdout.write(`[hook owner] ${line}\n`);
const port = Number(process.env.PORT ?? 8090);
const hostname = process.env.HOST ?? '127.0.0.1';
serve({ fetch: createHookApp(owner, log).fetch, port, hostname }, () => log(`listening on http://${hostname}:${port}/`));
guardEvery(owner, 2000, (err) => log(`guard: ${err.message}`));
