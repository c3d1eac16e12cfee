// Re-records examples/events/ from the real Knative Eventing (v0.50.0): the stack of
// test/cluster/knative-stack.ts, knative/eventing.yaml's ApiServerSources, PingSource, Broker and
// Triggers (each Trigger's subscriber a receiver pod, test/cluster/neoset-events.ts), the walkthrough's
// API changes, one PingSource tick (minute granularity: up to a minute's wait). Each file is what the
// Broker's filter delivered to the Trigger's subscriber, binary mode:
//   NNNN-<kind>-<name>-<verb>.headers     content-type and every ce-* header, as delivered
//   NNNN-<kind>-<name>-<verb>.data.json   the body, byte for byte
//   NNNN-<kind>-<name>-<verb>.json        the same event in structured mode (attributes and data)
// It claims the machine's service network:
//   flock /tmp/neoset-service-network.lock npx node examples/events/record.ts [directory]
// (default: this directory; the files it writes replace those of the same name). RECORD_DUMP=<file>
// also writes every delivery the receiver got (all Triggers, with every header) to that file.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PING_TYPE } from '../../shared/events/target.ts';
import { startKnativeStack } from '../../test/cluster/knative-stack.ts';
import { installNeoSetEventing, runWalkthroughChanges } from '../../test/cluster/neoset-events.ts';
import type { ReceivedEvent } from '../../test/cluster/knative-stack.ts';
import { waitFor } from '../../dev/kubelet/wait-for.ts';

const CORE_ATTRIBUTES = ['specversion', 'id', 'source', 'type', 'subject', 'time'];

/** The three files of one delivered event. */
export function eventFiles(event: ReceivedEvent): { headers: string; data: string; structured: string } {
  const names = Object.keys(event.headers).filter((h) => h.startsWith('ce-') || h === 'content-type').sort();
  const headers = names.map((h) => `${h}: ${event.headers[h]}\n`).join('');
  const a = event.attributes;
  const extensions = Object.keys(a).filter((k) => !CORE_ATTRIBUTES.includes(k)).sort();
  const structured: Record<string, unknown> = {};
  for (const k of CORE_ATTRIBUTES) if (k in a) structured[k] = a[k];
  structured.datacontenttype = event.headers['content-type'];
  for (const k of extensions) structured[k] = a[k];
  structured.data = JSON.parse(event.data);
  return { headers, data: event.data, structured: `${JSON.stringify(structured, null, 2)}\n` };
}

async function main() {
  const dir = process.argv[2] ?? new URL('.', import.meta.url).pathname;
  const started = Date.now();
  const stack = await startKnativeStack({ nodeName: 'record-node' });
  const stop = () => stack.stop().then(() => process.exit(130));
  process.once('SIGINT', stop).once('SIGTERM', stop);
  try {
    const eventing = await installNeoSetEventing(stack);
    console.log(`Knative and knative/eventing.yaml ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    const at = (path: string, type: string, name?: string) => (e: ReceivedEvent) =>
      e.path === path && e.attributes.type === type && (name === undefined || e.attributes.name === name);
    const path = { NeoSet: '/neoset-reconcile-neosets', Pod: '/neoset-readiness-pods' } as const;
    await runWalkthroughChanges(stack, 'default', async (verb, kind, name, test = () => true) => {
      await waitFor(async () => (await eventing.events()).some((e) => at(path[kind as keyof typeof path], `dev.knative.apiserver.resource.${verb}`, name)(e) && test(JSON.parse(e.data))), {
        what: `${kind} ${name} ${verb} at the receiver`,
        timeoutMs: 30_000,
        intervalMs: 250,
      });
    });
    console.log('waiting for a PingSource tick (at the next minute)');
    await waitFor(async () => (await eventing.events()).some(at('/neoset-reconcile-resync', PING_TYPE)), { what: 'a tick', timeoutMs: 75_000, intervalMs: 500 });
    const events = await eventing.events();
    if (process.env.RECORD_DUMP) writeFileSync(process.env.RECORD_DUMP, JSON.stringify(events, null, 2));
    const one = (test: (e: ReceivedEvent) => boolean, what: string) => {
      const found = events.filter(test).at(-1);
      if (!found) throw new Error(`no ${what} among ${events.length} events`);
      return found;
    };
    const podUpdate = (e: ReceivedEvent) => {
      const pod = JSON.parse(e.data) as { metadata: { annotations?: Record<string, string> }; spec: { containers: { image: string }[] } };
      return 'neoset.neo.io/inplace-update-state' in (pod.metadata.annotations ?? {}) && pod.spec.containers[0].image === 'mysql:8.1';
    };
    const chosen: [string, ReceivedEvent][] = [
      ['0001-neoset-mysql-add', one(at(path.NeoSet, 'dev.knative.apiserver.resource.add', 'mysql'), 'NeoSet add')],
      ['0002-neoset-mysql-update', one(at(path.NeoSet, 'dev.knative.apiserver.resource.update', 'mysql'), 'NeoSet update')],
      ['0003-pod-mysql-4-update', one((e) => at(path.Pod, 'dev.knative.apiserver.resource.update', 'mysql-4')(e) && podUpdate(e), 'pod mid-update')],
      ['0004-resync', one(at('/neoset-reconcile-resync', PING_TYPE), 'tick')],
      ['0005-pod-mysql-4-delete', one(at(path.Pod, 'dev.knative.apiserver.resource.delete', 'mysql-4'), 'pod delete')],
      ['0006-neoset-mysql-delete', one(at(path.NeoSet, 'dev.knative.apiserver.resource.delete', 'mysql'), 'NeoSet delete')],
    ];
    for (const [base, event] of chosen) {
      const files = eventFiles(event);
      writeFileSync(join(dir, `${base}.headers`), files.headers);
      writeFileSync(join(dir, `${base}.data.json`), files.data);
      writeFileSync(join(dir, `${base}.json`), files.structured);
    }
    console.log(`recorded ${chosen.length} of ${events.length} deliveries to ${dir} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    await stack.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
