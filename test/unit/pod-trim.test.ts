// What a snapshot keeps of a listed pod (shared/k8s/pod-trim.ts, long-strings.ts): NeoSet's own
// annotations and what decide() reads of the containers whole, a tenant's long values cut — from
// the bytes before parsing (long-strings) and from the object after (trimPod).
import { describe, expect, it } from 'vitest';
import { ANNOTATION_INPLACE_STATE } from '../../shared/api/names.ts';
import { parseItem } from '../../shared/k8s/json-body.ts';
import { cutValue, POD_LONG_STRINGS, trimPod } from '../../shared/k8s/pod-trim.ts';

const state = JSON.stringify({ revision: 'web-2', phase: 'Updating', note: 's'.repeat(20_000) });
const pod = () => ({
  metadata: { name: 'web-0', labels: { app: 'web' }, annotations: { [ANNOTATION_INPLACE_STATE]: state, 'example.com/blob': 'a'.repeat(200 * 1024), short: 'x' } },
  spec: { containers: [{ name: 'app', image: 'app:1', resources: { limits: { cpu: '1' } }, env: [{ name: 'E', value: 'e'.repeat(1 << 20) }], args: ['--a'] }], nodeName: 'n' },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', message: 'm'.repeat(4096) }] },
});
const kept = {
  metadata: { name: 'web-0', labels: { app: 'web' }, annotations: { [ANNOTATION_INPLACE_STATE]: state, 'example.com/blob': cutValue(200 * 1024), short: 'x' } },
  spec: { containers: [{ name: 'app', image: 'app:1', resources: { limits: { cpu: '1' } } }], nodeName: 'n' },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', message: 'm'.repeat(4096) }] },
};

describe('a listed pod as kept', () => {
  it('trimPod keeps NeoSet\'s annotations, the containers\' name, image and resources, and cuts the rest', () => {
    const p = pod();
    const cut = trimPod(p);
    expect(p).toEqual(kept);
    expect(cut).toBeGreaterThan(200 * 1024 + (1 << 20));
  });

  it('cut from the bytes first, long values never parsed, it is the same pod', () => {
    const bytes = Buffer.from(JSON.stringify(pod()));
    const { item, cut } = parseItem(bytes, 0, bytes.length, false, POD_LONG_STRINGS);
    expect(cut).toBeGreaterThan(200 * 1024 + (1 << 20) - 200);
    // The env value was cut from the bytes (its own stand-in), then the container's env dropped whole.
    expect((item as ReturnType<typeof pod>).spec.containers[0].env[0].value).toBe(cutValue((1 << 20)));
    trimPod(item);
    expect(item).toEqual(kept);
  });

  it('keeps escaped quotes and keys as they are', () => {
    const value = { metadata: { name: 'a', annotations: { [`k${'"'.repeat(3)}`]: `v\\"${'q'.repeat(20_000)}\\\\`, 'neoset.neo.io/x': 'y'.repeat(20_000) } } };
    const bytes = Buffer.from(JSON.stringify(value));
    const { item } = parseItem(bytes, 0, bytes.length, false, POD_LONG_STRINGS);
    expect(item).toEqual({ metadata: { name: 'a', annotations: { [`k${'"'.repeat(3)}`]: cutValue(JSON.stringify(value.metadata.annotations[`k${'"'.repeat(3)}`]).length - 2), 'neoset.neo.io/x': 'y'.repeat(20_000) } } });
  });
});
