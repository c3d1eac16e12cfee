// A process-mode httpGet probe asks the path kubelet's prober asks: a path written without its
// leading slash (Knative's ApiServerSource adapter is probed at `readiness`) gets one; without it
// the request line `GET readiness HTTP/1.1` is answered 400 and the pod never becomes Ready.
import { describe, expect, it } from 'vitest';
import { requestPath } from '../../dev/kubelet/process/probes.ts';

describe('requestPath', () => {
  it('is / when the probe names no path', () => {
    expect(requestPath(undefined)).toBe('/');
    expect(requestPath('')).toBe('/');
  });
  it('adds the leading slash kubelet adds, and keeps a query', () => {
    expect(requestPath('readiness')).toBe('/readiness');
    expect(requestPath('health?full=1')).toBe('/health?full=1');
    expect(requestPath('/healthz')).toBe('/healthz');
  });
});
