// What the dev stack makes of Knative Serving's release and of Traefik before anything runs: the
// ko:// references rewritten to images the process-mode table maps to the built binaries (never
// Eventing's, whose controller and webhook share the names), the ConfigMap keys set, and Traefik's
// entry running only the checkout's static configuration — a pod's args refused, as its command.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { knativeImage } from '../../dev/cluster/knative.ts';
import { knativeServingRelease, servingImage, servingPrograms, SHORT_AUTOSCALER_WINDOWS } from '../../dev/cluster/serving.ts';
import { TRAEFIK_IMAGE, TRAEFIK_STATIC_CONFIG, traefikLayout, traefikManifests, traefikPrograms } from '../../dev/cluster/traefik.ts';
import { commandLine, ContainerConfigError } from '../../dev/kubelet/process/environment.ts';
import { CHECKOUT, createImageTable } from '../../dev/kubelet/process/image-table.ts';

const dir = mkdtempSync(join(tmpdir(), 'neoset-serving-release-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A release laid out as config/core is: a CRD, a Deployment naming ko://, the ConfigMaps servingConfig sets. */
function fakeRelease(): string {
  const core = join(dir, 'config', 'core');
  mkdirSync(join(core, '300-resources'), { recursive: true });
  mkdirSync(join(core, 'configmaps'), { recursive: true });
  mkdirSync(join(core, 'deployments'), { recursive: true });
  writeFileSync(join(core, '300-resources', 'route.yaml'), 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: routes.serving.knative.dev\n');
  const configMap = (name: string, data: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: knative-serving\ndata:\n${data}`;
  writeFileSync(
    join(core, 'configmaps', 'all.yaml'),
    [
      configMap('config-network', '  _example: x\n'),
      configMap('config-domain', '  _example: x\n'),
      configMap('config-deployment', '  queue-sidecar-image: ko://knative.dev/serving/cmd/queue\n'),
      configMap('config-autoscaler', '  _example: x\n'),
    ].join('---\n'),
  );
  writeFileSync(
    join(core, 'deployments', 'controller.yaml'),
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: controller\n  namespace: knative-serving\nspec:\n  template:\n    spec:\n      containers:\n      - name: controller\n        image: ko://knative.dev/serving/cmd/controller\n',
  );
  return dir;
}

describe("Knative Serving's release on the dev stack", () => {
  const [crds, core] = knativeServingRelease(fakeRelease(), { autoscaler: SHORT_AUTOSCALER_WINDOWS });
  const data = (name: string) => core.manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === name)!.data as Record<string, string>;

  it('rewrites ko:// references to images of its own, which the table runs as the binaries', () => {
    expect(crds.manifests.map((m) => m.metadata.name)).toEqual(['routes.serving.knative.dev']);
    expect(JSON.stringify(core.manifests)).not.toContain('ko://');
    const controller = core.manifests.find((m) => m.kind === 'Deployment')!;
    expect(JSON.stringify(controller)).toContain('"image":"neoset.local/knative-serving/controller:v0.50.0"');
    expect(data('config-deployment')['queue-sidecar-image']).toBe(servingImage('queue'));
    expect(servingImage('controller')).not.toBe(knativeImage('controller'));

    const table = createImageTable([], {}, servingPrograms('/opt/serving'));
    for (const cmd of ['controller', 'activator', 'autoscaler', 'webhook', 'queue']) {
      expect(table.lookup(servingImage(cmd))).toMatchObject({ entrypoint: [`/opt/serving/${cmd}`], fixedCommand: true });
    }
    // Without the programs (a kubelet not given Serving) the images stay simulated.
    expect(createImageTable([], {}).lookup(servingImage('controller'))).toBeUndefined();
  });

  it("sets Traefik's ingress class, a domain, the registries not resolved and the short windows", () => {
    expect(data('config-network')).toEqual({ _example: 'x', 'ingress-class': 'traefik.ingress.networking.knative.dev' });
    expect(data('config-domain')).toEqual({ _example: 'x', 'neoset.example': '' });
    expect(data('config-deployment')['registries-skipping-tag-resolving'].split(',')).toEqual(expect.arrayContaining(['neoset.local', 'ghcr.io', 'kind.local', 'ko.local', 'dev.local']));
    expect(data('config-autoscaler')).toMatchObject({ 'stable-window': '6s', 'scale-to-zero-grace-period': '6s' });
  });
});

describe('Traefik on the dev stack', () => {
  const table = createImageTable([], {}, traefikPrograms('/opt/traefik'));
  const entry = table.lookup(TRAEFIK_IMAGE)!;
  const container = traefikManifests().flatMap((m) => (m.kind === 'Deployment' ? [(m.spec as { template: { spec: { containers: { name: string; image: string }[] } } }).template.spec.containers[0]] : []))[0];

  it("runs the binary with the checkout's static configuration and nothing else", () => {
    expect(TRAEFIK_STATIC_CONFIG).toBe(`${CHECKOUT}/dev/cluster/traefik.yaml`);
    expect(commandLine(container, entry, {}, 'h').argv).toEqual(['/opt/traefik', `--configFile=${TRAEFIK_STATIC_CONFIG}`]);
  });

  it("refuses a pod's args and command for it (its flags could load plugins and files; the pod runs as root)", () => {
    expect(() => commandLine({ ...container, args: ['--experimental.localPlugins.x.moduleName=evil'] }, entry, {}, 'h')).toThrow(ContainerConfigError);
    expect(() => commandLine({ ...container, args: ['--configFile=/tmp/mine.yaml'] }, entry, {}, 'h')).toThrow(/args are not passed: this image runs its own program only/);
    expect(() => commandLine({ ...container, command: ['/opt/traefik'] }, entry, {}, 'h')).toThrow(/a command is not run/);
  });

  it('serves the entrypoints traefik.yaml names behind the Services its KIngress statuses name', () => {
    const layout = traefikLayout();
    expect(layout).toEqual({ namespace: 'traefik', watched: ['neoset-system'], publicService: 'traefik', privateService: 'traefik-private', ports: { public: 8080, private: 8081, ping: 9000 } });
    const services = traefikManifests(layout).filter((m) => m.kind === 'Service');
    expect(services.map((s) => [s.metadata.name, (s.spec as { ports: { port: number; targetPort: string }[] }).ports[0]])).toEqual([
      ['traefik', { name: 'http', port: 80, targetPort: 'web' }],
      ['traefik-private', { name: 'http', port: 80, targetPort: 'private' }],
    ]);
    const bindings = traefikManifests(layout).filter((m) => m.kind === 'RoleBinding' || m.kind === 'ClusterRoleBinding');
    expect(bindings.map((b) => [b.kind, b.metadata.namespace])).toEqual([['RoleBinding', 'neoset-system']]);
  });
});
