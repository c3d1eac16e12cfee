// The pump's watch keeps delivering after the server ends its stream (here every 2 s), and reports
// nothing for objects that existed before it started unless asked to (ApiServerSource sends none).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKubeClient } from '../../shared/k8s/client.ts';
import { createTestNamespace, kubeConfig, type TestNamespace } from '../cluster/harness.ts';
import { poll } from '../../dev/cluster/wait.ts';
import { resilientWatch, type WatchEventType } from '../../shared/k8s/watch.ts';

let ns: TestNamespace;
beforeAll(async () => {
  ns = await createTestNamespace('resilient-watch');
});
afterAll(async () => {
  await ns?.cleanup();
});

it('survives the end of its stream and sees later changes, but not what existed before', async () => {
  const client = createKubeClient(kubeConfig());
  const path = `/api/v1/namespaces/${ns.name}/configmaps`;
  await client.request('POST', path, { body: { metadata: { name: 'before' } } });
  const seen: string[] = [];
  const errors: Error[] = [];
  const w = resilientWatch({
    kubeConfig: kubeConfig(),
    path,
    timeoutSeconds: 2,
    onEvent: (type: WatchEventType, obj) => seen.push(`${type} ${obj.metadata.name}`),
    onError: (err) => errors.push(err),
  });
  try {
    await w.ready;
    await new Promise((r) => setTimeout(r, 5000)); // at least two server-side ends of the stream
    await client.request('POST', path, { body: { metadata: { name: 'after' } } });
    await client.request('DELETE', `${path}/after`);
    await poll('the delete to be seen', async () => (seen.includes('DELETED after') ? true : undefined), { timeoutMs: 10_000 });
    expect(seen.filter((s) => s.endsWith('after'))).toEqual(['ADDED after', 'DELETED after']);
    expect(seen.some((s) => s.endsWith(' before'))).toBe(false);
    expect(errors).toEqual([]);
  } finally {
    w.stop();
  }
});
