// The test control plane itself (SPEC §7): the NeoSet CRD as the real API server serves it (schema
// defaults, status and scale subresources, printer columns, explain) and the garbage collector that
// NeoSet's owner references rely on.
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, PLURAL, VERSION } from '../../shared/api/names.ts';
import { createTestNamespace, kubeConfig, kubectl, type TestNamespace } from '../cluster/harness.ts';
import { poll, readIfExists, waitForDeletion } from '../../dev/cluster/wait.ts';
import { SPEC_DEFAULTS } from '../fixtures/spec-defaults.ts';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let ns: TestNamespace;
beforeAll(async () => {
  ns = await createTestNamespace('control-plane');
});
afterAll(async () => {
  await ns?.cleanup();
});

const template = {
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'web', image: 'nginx:1.0' }] },
};

describe('NeoSet CRD', () => {
  const custom = () => kubeConfig().makeApiClient(CustomObjectsApi);
  const neoset = (name: string) => ({ group: GROUP, version: VERSION, namespace: ns.name, plural: PLURAL, name });

  it('is installed and Established', async () => {
    const crd = await kubeConfig().makeApiClient(ApiextensionsV1Api).readCustomResourceDefinition({ name: `${PLURAL}.${GROUP}` });
    expect(crd.status?.conditions?.find((c) => c.type === 'Established')?.status).toBe('True');
    expect(crd.spec.names.shortNames).toEqual(['neo']);
  });

  it('fills every schema default of a minimal NeoSet', async () => {
    const { name: _, ...where } = neoset('');
    await custom().createNamespacedCustomObject({
      ...where,
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'NeoSet',
        metadata: { name: 'defaults' },
        spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template },
      },
    });
    const stored = await custom().getNamespacedCustomObject(neoset('defaults'));
    expect(stored.spec).toEqual({
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template,
      ...SPEC_DEFAULTS,
    });
  });

  it('writes and reads .status through the status subresource', async () => {
    const status = {
      replicas: 2,
      readyReplicas: 1,
      updatedReplicas: 1,
      phase: 'RollingOut',
      currentImage: 'nginx:1.0',
      targetImage: 'nginx:1.1',
      labelSelector: 'app=web',
    };
    await custom().patchNamespacedCustomObjectStatus({ ...neoset('defaults'), body: { status } }, mergePatch);
    const stored = await custom().getNamespacedCustomObject(neoset('defaults'));
    expect(stored.status).toEqual(status);
    // The main resource ignores .status: only the subresource writes it.
    await custom().patchNamespacedCustomObject({ ...neoset('defaults'), body: { status: { phase: 'Failed' } } }, mergePatch);
    expect((await custom().getNamespacedCustomObject(neoset('defaults'))).status.phase).toBe('RollingOut');
  });

  it('scales through the scale subresource (client-node and kubectl scale)', async () => {
    await custom().patchNamespacedCustomObjectScale({ ...neoset('defaults'), body: { spec: { replicas: 4 } } }, mergePatch);
    expect((await custom().getNamespacedCustomObject(neoset('defaults'))).spec.replicas).toBe(4);

    const scaled = await kubectl(['-n', ns.name, 'scale', 'neo/defaults', '--replicas=3']);
    expect(scaled.stderr).toBe('');
    expect(scaled.code).toBe(0);
    expect((await custom().getNamespacedCustomObject(neoset('defaults'))).spec.replicas).toBe(3);

    const scale = await custom().getNamespacedCustomObjectScale(neoset('defaults'));
    expect(scale.spec).toEqual({ replicas: 3 });
    expect(scale.status).toEqual({ replicas: 2, selector: 'app=web' });
  });

  it('kubectl get neo prints the seed columns', async () => {
    const { code, stdout, stderr } = await kubectl(['-n', ns.name, 'get', 'neo']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const [header, row] = stdout.trim().split('\n').map((line) => line.trim().split(/\s+/));
    expect(header).toEqual(['NAME', 'REPLICAS', 'READY', 'UPDATED', 'PHASE', 'CURRENT', 'TARGET', 'AGE']);
    expect(row.slice(0, 7)).toEqual(['defaults', '3', '1', '1', 'RollingOut', 'nginx:1.0', 'nginx:1.1']);
    expect(row[7]).toMatch(/^\d+s$/);
  });

  it('kubectl explain describes the NeoSet schema', async () => {
    // The CRD's OpenAPI is published a moment after the CRD is Established.
    const explained = await poll('kubectl explain to know neoset', async () => {
      const result = await kubectl(['explain', 'neoset.spec.updateStrategy.maxUnavailable']);
      return result.code === 0 ? result : undefined;
    }, { timeoutMs: 30_000, intervalMs: 500 });
    expect(explained.stdout).toContain('KIND:       NeoSet');
    expect(explained.stdout).toContain('Most pods that may be unavailable at once during an update');
    // §4.9: what is resized in place, and how kubelet applies it.
    const resources = await kubectl(['explain', 'neoset.spec.template.spec.containers.resources']);
    // kubectl explain wraps its text: compared with the line breaks as spaces.
    const flat = (text: string) => text.replace(/\s+/g, ' ');
    expect(flat(resources.stdout)).toContain('updated in place under InPlaceIfPossible/InPlaceOnly through the Pod resize subresource');
    const policy = await kubectl(['explain', 'neoset.spec.template.spec.containers.resizePolicy.restartPolicy']);
    // §4.10: the update hooks.
    const hooks = await kubectl(['explain', 'neoset.spec.lifecycle.preUpdate.labelsHandler']);
    expect(flat(hooks.stdout)).toContain('NeoSet waits until the owner removes them');
    const lifecycle = await kubectl(['explain', 'neoset.spec.lifecycle']);
    expect(flat(lifecycle.stdout)).toContain('io.neo.neoset.lifecycle.<state>');
    expect(flat(policy.stdout)).toContain('RestartContainer (kubelet restarts the container to apply it)');
  });

  it('rejects a NeoSet that violates the schema, naming the field', async () => {
    const { name: _, ...where } = neoset('');
    const attempt = custom().createNamespacedCustomObject({
      ...where,
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'NeoSet',
        metadata: { name: 'invalid' },
        spec: { replicas: -1, selector: { matchLabels: { app: 'web' } }, template, podManagementPolicy: 'Sometimes' },
      },
    });
    await expect(attempt).rejects.toThrow(/spec\.replicas.*should be greater than or equal to 0/s);
  });
});

describe('kube-controller-manager', () => {
  it('garbage-collects a dependent when its owner is deleted', async () => {
    const core = kubeConfig().makeApiClient(CoreV1Api);
    const namespace = ns.name;
    const owner = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'owner' }, data: { role: 'owner' } } });
    await core.createNamespacedConfigMap({
      namespace,
      body: {
        metadata: {
          name: 'dependent',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid!, blockOwnerDeletion: true },
          ],
        },
        data: { role: 'dependent' },
      },
    });
    await core.deleteNamespacedConfigMap({ namespace, name: 'owner' });
    await waitForDeletion('the dependent ConfigMap (by the garbage collector)', () => core.readNamespacedConfigMap({ namespace, name: 'dependent' }), {
      timeoutMs: 60_000,
      intervalMs: 200,
    });
  });

  it('gives a new namespace its default ServiceAccount and kube-root-ca.crt', async () => {
    const core = kubeConfig().makeApiClient(CoreV1Api);
    // createTestNamespace already waited for the ServiceAccount; the CA ConfigMap comes from the publisher.
    await core.readNamespacedServiceAccount({ namespace: ns.name, name: 'default' });
    const rootCa = await poll('kube-root-ca.crt', () =>
      readIfExists(() => core.readNamespacedConfigMap({ namespace: ns.name, name: 'kube-root-ca.crt' })),
    );
    expect(rootCa.data?.['ca.crt']).toContain('BEGIN CERTIFICATE');
  });
});
