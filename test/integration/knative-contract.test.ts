// The bridge (dev/bridge/) against the real Knative Eventing v0.50.0: the same API changes (the
// walkthrough's, test/cluster/neoset-events.ts) reach a subscriber once through knative/eventing.yaml
// on the real ApiServerSources, PingSource, Broker and Triggers (each Trigger's subscriber the receiver
// pod, the path naming the Trigger), and once through the bridge's pump, whose sinks are made from the
// same Triggers (sinksFromTriggers) and capture in-process. Both watch the same API server at once, so
// every object state (resourceVersion) is delivered by both: the same events to the same Triggers, with
// the same attributes, extensions, headers and body bytes; a Trigger whose subscriber fails (no retries)
// has its events dead-lettered by both alike. Only what must differ is normalized: ids,
// times, the `source` (the adapter names the API server by its in-cluster address, the bridge by
// the kubeconfig's) and a dead letter's failed subscriber's address. Claims the service network: run under flock /tmp/neoset-service-network.lock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPump, type Pump } from '../../dev/bridge/pump.ts';
import { sinksFromTriggers } from '../../dev/bridge/triggers.ts';
import type { FetchLike } from '../../dev/bridge/delivery.ts';
import { waitFor } from '../../dev/kubelet/wait-for.ts';
import { kustomize, type Manifest } from '../../dev/manifests.ts';
import { parseEvent, PING_TYPE } from '../../shared/events/target.ts';
import { startKnativeStack, type KnativeStack, type ReceivedEvent } from '../cluster/knative-stack.ts';
import { addTriggers, DEAD_LETTER, eventingToReceiver, failingTrigger, installNeoSetEventing, runWalkthroughChanges, type NeoSetEventing } from '../cluster/neoset-events.ts';

let stack: KnativeStack | undefined;
let real: NeoSetEventing;
let pump: Pump | undefined;
const bridged: ReceivedEvent[] = [];

/**
 * The Triggers of knative/eventing.yaml and the failing one, each subscribed by a Service named as the
 * Trigger: one capture each (the failing one answers 503 as the receiver does), and one for the
 * dead-letter sink.
 */
function bridgeSinks(): ReturnType<typeof sinksFromTriggers> {
  const manifests = [...eventingToReceiver(kustomize()), failingTrigger()].map((m) => {
    if (m.kind !== 'Trigger') return m;
    const t = structuredClone(m) as Manifest & { spec: { subscriber: { ref: { name: string } } } };
    t.spec.subscriber.ref.name = t.metadata.name;
    return t;
  });
  const capture = (path: string): FetchLike => async (req) => {
    if (path === `/${failingTrigger().metadata.name}`) return new Response('failing', { status: 503 });
    const headers = Object.fromEntries(req.headers.entries());
    const attributes = Object.fromEntries(Object.entries(headers).filter(([h]) => h.startsWith('ce-')).map(([h, v]) => [h.slice(3), v]));
    bridged.push({ path, headers, attributes, data: await req.text() });
    return new Response(null, { status: 202 });
  };
  const triggers = manifests.filter((m) => m.kind === 'Trigger').map((t) => t.metadata.name);
  return sinksFromTriggers(manifests, { ...Object.fromEntries(triggers.map((name) => [name, capture(`/${name}`)])), [DEAD_LETTER]: capture('/dead-letter') });
}

beforeAll(async () => {
  stack = await startKnativeStack({ nodeName: 'contract-node' });
  real = await installNeoSetEventing(stack);
  await addTriggers(stack, [failingTrigger()]);
  pump = startPump({ kubeConfig: stack.cp.kubeConfig(), sinks: bridgeSinks(), resyncMs: 0 });
  await pump.ready;
}, 300_000);

afterAll(async () => {
  await pump?.stop();
  if (process.env.KNATIVE_LOG && stack) console.log(stack.log.join('\n'), '\n', stack.containerLogTails());
  await stack?.stop();
}, 60_000);

const RESOURCE = /^dev\.knative\.apiserver\.resource\.(add|update|delete)$/;
/** What an event is about: the Trigger it came through, its type, its object's name and resourceVersion. */
function keyOf(e: ReceivedEvent): string {
  if (e.attributes.type === PING_TYPE) return `${e.path} ${PING_TYPE}`;
  const { metadata } = JSON.parse(e.data) as { metadata: { name: string; resourceVersion: string } };
  return `${e.path} ${e.attributes.type} ${metadata.name}@${metadata.resourceVersion}`;
}

/** HTTP's own headers, which say how the request travelled, not what it carries. */
const TRANSPORT = new Set(['host', 'user-agent', 'content-length', 'accept-encoding', 'connection', 'accept', 'accept-language', 'sec-fetch-mode']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The headers an event carries, with the values that must differ checked for their form and replaced. */
function normalized(e: ReceivedEvent, apiServer: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(e.headers)) {
    if (TRANSPORT.has(name)) continue;
    if (name === 'ce-id') {
      expect(value, `${keyOf(e)}: ce-id`).toMatch(UUID);
      out[name] = '<uuid>';
    } else if (name === 'ce-time' || name === 'ce-knativearrivaltime') {
      expect(Number.isNaN(Date.parse(value)), `${keyOf(e)}: ${name} ${value} is a time`).toBe(false);
      expect(Math.abs(Date.parse(value) - Date.now()), `${keyOf(e)}: ${name} ${value} is recent`).toBeLessThan(300_000);
      out[name] = '<time>';
    } else if (name === 'ce-knativeerrordest') {
      // The failed subscriber's address: the receiver's Service for Knative, in-process for the bridge.
      expect(() => new URL(value), `${keyOf(e)}: ${name} ${value} is a URL`).not.toThrow();
      out[name] = '<subscriber>';
    } else if (name === 'ce-source' && RESOURCE.test(e.attributes.type)) {
      expect(value, `${keyOf(e)}: the source of a resource event is the API server`).toBe(apiServer);
      out[name] = '<api server>';
    } else out[name] = value;
  }
  return out;
}

describe('the bridge and the real Knative deliver the same CloudEvents', () => {
  const differences: string[] = [];

  it('deliver the same events to the same Triggers for the same API changes and a resync tick', async () => {
    const reconcilePaths = { NeoSet: ['/neoset-reconcile-neosets'], Pod: ['/neoset-reconcile-pods', '/neoset-readiness-pods'] } as const;
    await runWalkthroughChanges(stack!, 'default', async (verb, kind, name, test = () => true) => {
      const type = `dev.knative.apiserver.resource.${verb}`;
      const arrived = (events: ReceivedEvent[]) =>
        reconcilePaths[kind as keyof typeof reconcilePaths].every((path) => events.some((e) => e.path === path && e.attributes.type === type && e.attributes.name === name && test(JSON.parse(e.data))));
      await waitFor(async () => arrived(await real.events()) && arrived(bridged), { what: `${kind} ${name} ${verb} through both`, timeoutMs: 30_000, intervalMs: 250 });
    });
    // Knative's PingSource ticks at the minute; the bridge's when told.
    await waitFor(async () => (await real.events()).some((e) => e.attributes.type === PING_TYPE), { what: "the real PingSource's tick", timeoutMs: 75_000, intervalMs: 500 });
    pump!.tick();
    await pump!.idle();
    await new Promise((r) => setTimeout(r, 2000)); // the Broker's stragglers, if any
    const realEvents = await real.events();
    const keys = (events: ReceivedEvent[]) => events.map(keyOf).sort();
    expect(keys(bridged)).toEqual(keys(realEvents));
    console.log(`${realEvents.length} deliveries through each, ${new Set(keys(realEvents)).size} distinct:\n${[...new Set(keys(realEvents))].join('\n')}`);
  }, 240_000);

  it('with the same attributes, extensions and HTTP headers (ids, times and the source normalized)', async () => {
    const realEvents = await real.events();
    const apiServers = { real: 'https://10.96.0.1:443', bridge: stack!.cp.kubeConfig().getCurrentCluster()!.server };
    for (const r of realEvents) {
      const b = bridged.find((e) => keyOf(e) === keyOf(r))!;
      expect(normalized(b, apiServers.bridge), keyOf(r)).toEqual(normalized(r, apiServers.real));
    }
    const sample = (type: string) => realEvents.find((e) => e.attributes.type === type)!;
    const pairs = [sample('dev.knative.apiserver.resource.add'), sample(PING_TYPE)].map((r) => [r, bridged.find((e) => keyOf(e) === keyOf(r))!] as const);
    for (const [r, b] of pairs) {
      differences.push(`${r.attributes.type}: time ${r.attributes.time} (real) / ${b.attributes.time} (bridge); knativearrivaltime ${r.attributes.knativearrivaltime} / ${b.attributes.knativearrivaltime}; source ${r.attributes.source} / ${b.attributes.source}`);
    }
    console.log(`normalized (must differ):\n${differences.join('\n')}`);
  });

  it('with the same body, byte for byte', async () => {
    for (const r of await real.events()) {
      const b = bridged.find((e) => keyOf(e) === keyOf(r))!;
      expect(b.data, keyOf(r)).toBe(r.data);
    }
  });

  it("each of which the functions' event parser takes for its object (SPEC §2.1)", async () => {
    for (const r of await real.events()) {
      const parsed = parseEvent(r.headers, r.data);
      if (r.attributes.type === PING_TYPE) expect(parsed.target, keyOf(r)).toEqual({ kind: 'all' });
      else if (r.attributes.kind === 'NeoSet') expect(parsed.target, keyOf(r)).toEqual({ kind: 'neoset', namespace: 'default', name: 'mysql' });
      else expect(parsed.target, keyOf(r)).toEqual({ kind: 'pod', namespace: 'default', name: 'mysql-4', neoset: 'mysql' });
    }
  });
});
