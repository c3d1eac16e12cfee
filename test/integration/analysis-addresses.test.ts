// SPEC §2.3 "Analysis addresses are the operator's", defence in depth on a real API server (issue 19,
// point 2). Admission refuses an unlisted address (test/unit/admission-cases.ts: the case runs
// through the real webhook in test/integration/admission.test.ts). Here the NeoSet is stored anyway —
// no webhook covers this namespace, as for a NeoSet stored before the rule or with admission
// bypassed — and its rollout runs on the functions in-process (test/e2e/stack.ts) with an allow-list
// that does not contain its address: the listener it names, which answers like a Prometheus whose
// query passes, must receive nothing, and status must carry the fixed reason.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analysisAddressesFromEnv } from '../../shared/core/canary/addresses.ts';
import { applyNeoSet, imageOf, setImage, untilStatus } from '../e2e/helpers.ts';
import type { NeoSetObject } from '../e2e/observer.ts';
import { neosetManifest, startStack, type Stack } from '../e2e/stack.ts';

const canaryOf = (n: NeoSetObject) => (n.status?.canary?.revision === n.status?.updateRevision ? n.status?.canary : undefined);
const condition = (n: NeoSetObject, type: string) => n.status?.conditions?.find((c) => c.type === type);

describe('a NeoSet stored with an analysis address the install does not allow', () => {
  let stack: Stack;
  let listener: Server;
  let url: string;
  const received: string[] = [];

  beforeAll(async () => {
    // Answers as a Prometheus whose query holds: followed, the canary would pass and the value show in status.
    listener = createServer((req, res) => {
      received.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [0, '0'] }] } }));
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    // The install allows one Prometheus, not this listener.
    stack = await startStack({ prefix: 'analysis-addr', resyncMs: 1000, analysisAddresses: analysisAddressesFromEnv({ NEOSET_ANALYSIS_ADDRESSES: 'http://prometheus.monitoring:9090' }) });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    listener?.closeAllConnections();
    await new Promise((r) => listener?.close(r));
  });

  it('holds the rollout at its first step, inconclusive with the fixed reason; the listener receives nothing', async () => {
    const name = 'unlisted';
    const updateStrategy = { canary: { steps: [{ partition: 2 }, { partition: 0 }], analysis: { prometheus: { address: url, query: 'up', successCondition: 'result < 1' } } } };
    await applyNeoSet(stack, neosetManifest({ name, replicas: 3, image: 'mysql:8.0', updateStrategy }));
    await untilStatus(stack, name, '3 ready pods', (n) => n.status?.readyReplicas === 3 && n.status?.phase === 'Idle');
    await setImage(stack, name, 'mysql:8.1');
    // The first analysis result, whatever it is: on code that queries any address it is a pass.
    const judged = await untilStatus(stack, name, 'an analysis result in status.canary', (n) => canaryOf(n)?.analysis !== undefined, 60_000);
    console.log(JSON.stringify({ analysis: canaryOf(judged)?.analysis, paused: condition(judged, 'Paused'), received }));
    expect(received).toEqual([]);
    const reason = `Prometheus at ${url}: address not allowed by this install`;
    expect(canaryOf(judged)?.analysis).toMatchObject({ step: 0, result: 'Inconclusive', message: `analysis inconclusive: ${reason}` });
    expect(canaryOf(judged)?.analysis?.value).toBeUndefined();
    // Held, as for an unreachable Prometheus: more resync ticks, still nothing received, pod 2 alone updated.
    const held = await untilStatus(stack, name, 'Paused: analysis inconclusive', (n) => condition(n, 'Paused')?.reason === 'AnalysisInconclusive', 30_000);
    expect(condition(held, 'Paused')!.message).toContain(reason);
    await new Promise((r) => setTimeout(r, 4000));
    expect(received).toEqual([]);
    expect(canaryOf(stack.observer.neoset(name)!)).toMatchObject({ stepIndex: 0, analysis: { result: 'Inconclusive' } });
    expect(stack.observer.pods(name).map(imageOf)).toEqual(['mysql:8.0', 'mysql:8.0', 'mysql:8.1']);
  }, 120_000);

  it('no invariant was violated', () => {
    expect(stack.observer.violations).toEqual([]);
  });
});
