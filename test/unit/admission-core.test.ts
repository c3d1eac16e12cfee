// The pure admission core (shared/admission): quantities, limits, defaults, selector, in-place
// change, rules, warnings and the dry-run Pod — no HTTP, no cluster.
import { describe, expect, it } from 'vitest';
import { NeoSet, NeoSetSpec } from '../../shared/api/neoset.ts';
import { defaultsPatch } from '../../shared/admission/defaults.ts';
import { fieldPath, jsonPointer } from '../../shared/core/field-path.ts';
import { inPlaceChangeBlockers } from '../../shared/core/revisions/template-diff.ts';
import { judgeNeoSet, judgeScale } from '../../shared/admission/judge.ts';
import { sameJson } from '../../shared/core/json.ts';
import { ConfigError, DEFAULT_LIMITS, limitsFromEnv } from '../../shared/admission/limits.ts';
import { ordinalPod } from '../../shared/admission/pod.ts';
import { compareQuantities, parseQuantity } from '../../shared/admission/quantity.ts';
import { reviewIssues } from '../../shared/admission/validate.ts';
import { valueAt } from '../../shared/admission/issue.ts';
import { neosetWarnings } from '../../shared/admission/warnings.ts';
import { resolveMaxUnavailable as resolveBudget } from '../../shared/core/update/budget.ts';
import { applyAdds, CASE_ENV, DEFAULT_UPDATE_STRATEGY, INVALID_CASES, validNeoSet } from './admission-cases.ts';

const limits = limitsFromEnv(CASE_ENV);
const parse = (raw: unknown) => NeoSet.parse(raw);

describe('quantities', () => {
  const q = (s: string | number) => parseQuantity(s)!;
  it.each([
    ['500m', '0.5', 0],
    ['1Gi', '1G', 1],
    ['1k', '1e3', 0],
    ['1500m', '1.5', 0],
    [2, '2000m', 0],
    ['1Mi', '1048576', 0],
    ['100n', '0.0000001', 0],
    ['1E', '1e18', 0],
    ['.5', '500m', 0],
    ['1.', '1', 0],
    ['-1', '0', -1],
    ['4Gi', '4294967297', -1],
  ] as const)('%s vs %s', (a, b, expected) => {
    expect(compareQuantities(q(a), q(b))).toBe(expected);
  });
  it.each(['', 'abc', '1.2.3', '5Qi', ' 1', '1 ', 'Mi', '1e101', '1ki', '--1', '1e', `${'9'.repeat(65)}`])('refuses %j', (s) => {
    expect(parseQuantity(s)).toBeNull();
  });
});

describe('limits from the environment', () => {
  it('defaults: 1000 replicas, no caps', () => {
    expect(limitsFromEnv({})).toEqual(DEFAULT_LIMITS);
  });
  it('reads the analysis addresses (none by default), in normal form', () => {
    expect(DEFAULT_LIMITS.analysisAddresses).toEqual([]);
    expect(limitsFromEnv({ NEOSET_ANALYSIS_ADDRESSES: 'http://prom:9090/,https://Thanos.monitoring' }).analysisAddresses).toEqual(['http://prom:9090', 'https://thanos.monitoring']);
  });
  it('reads caps as quantities', () => {
    const l = limitsFromEnv({ NEOSET_MAX_REPLICAS: '50', NEOSET_MAX_CPU: '1500m', NEOSET_MAX_MEMORY: '2Gi' });
    expect(l.maxReplicas).toBe(50);
    expect(l.maxCpu!.text).toBe('1500m');
    expect(compareQuantities(l.maxMemory!, parseQuantity('2147483648')!)).toBe(0);
  });
  it.each([
    [{ NEOSET_MAX_REPLICAS: '-1' }, 'NEOSET_MAX_REPLICAS'],
    [{ NEOSET_MAX_REPLICAS: '1e3' }, 'NEOSET_MAX_REPLICAS'],
    [{ NEOSET_MAX_CPU: 'two' }, 'NEOSET_MAX_CPU'],
    [{ NEOSET_MAX_MEMORY: '0' }, 'NEOSET_MAX_MEMORY'],
    [{ NEOSET_ANALYSIS_ADDRESSES: 'prometheus:9090' }, 'NEOSET_ANALYSIS_ADDRESSES'],
    [{ NEOSET_ANALYSIS_ADDRESSES: 'http://prometheus:9090,http://user:secret@other:9090' }, 'NEOSET_ANALYSIS_ADDRESSES'],
  ])('refuses %j, naming the variable', (env, variable) => {
    expect(() => limitsFromEnv(env)).toThrow(ConfigError);
    expect(() => limitsFromEnv(env)).toThrow(variable);
  });
});

describe('field paths', () => {
  it('prints Kubernetes paths and JSON pointers', () => {
    expect(fieldPath(['spec', 'containers', 0, 'name'])).toBe('spec.containers[0].name');
    expect(fieldPath(['metadata', 'labels', 'app.kubernetes.io/name'])).toBe('metadata.labels[app.kubernetes.io/name]');
    expect(jsonPointer(['metadata', 'annotations', 'a/b~c'])).toBe('/metadata/annotations/a~1b~0c');
  });
});

describe('defaults (/mutate)', () => {
  const minimal = () => {
    const n = validNeoSet();
    delete n.spec.replicas;
    return n;
  };

  it('fills every default of SPEC §3 that is missing', () => {
    const patch = defaultsPatch(minimal());
    expect(patch.map((op) => op.path).sort()).toEqual(
      [
        '/spec/replicas',
        '/spec/volumeClaimTemplates',
        '/spec/podManagementPolicy',
        '/spec/persistentVolumeClaimRetentionPolicy',
        '/spec/minReadySeconds',
        '/spec/revisionHistoryLimit',
        '/spec/updateStrategy',
      ].sort(),
    );
    const patched = applyAdds(minimal(), patch);
    expect(patched.spec.updateStrategy).toEqual(DEFAULT_UPDATE_STRATEGY);
    expect(patched.spec).toEqual(NeoSetSpec.parse(minimal().spec));
  });

  it('is idempotent: nothing missing, no patch', () => {
    const once = applyAdds(minimal(), defaultsPatch(minimal()));
    expect(defaultsPatch(once)).toEqual([]);
  });

  it('fills nested defaults without touching what the user wrote', () => {
    const n = validNeoSet();
    n.spec.updateStrategy = { partition: 2, inPlaceUpdateStrategy: { timeoutSeconds: 30 }, extra: 'kept' };
    const patch = defaultsPatch(n);
    const strategyOps = patch.filter((op) => op.path.startsWith('/spec/updateStrategy')).map((op) => op.path).sort();
    expect(strategyOps).toEqual([
      '/spec/updateStrategy/inPlaceUpdateStrategy/gracePeriodSeconds',
      '/spec/updateStrategy/inPlaceUpdateStrategy/readiness',
      '/spec/updateStrategy/maxUnavailable',
      '/spec/updateStrategy/pause',
      '/spec/updateStrategy/type',
    ]);
    const patched = applyAdds(n, patch);
    expect(patched.spec.updateStrategy.partition).toBe(2);
    expect(patched.spec.updateStrategy.inPlaceUpdateStrategy.timeoutSeconds).toBe(30);
    expect(patched.spec.updateStrategy.extra).toBe('kept');
    expect(patched.spec.template).toEqual(n.spec.template);
  });

  it('leaves a spec that does not parse to the schema and /validate', () => {
    const n = validNeoSet();
    n.spec.replicas = 'three';
    expect(defaultsPatch(n)).toEqual([]);
    expect(defaultsPatch(null)).toEqual([]);
    expect(defaultsPatch({ spec: [] })).toEqual([]);
  });
});

describe('in-place change blockers', () => {
  const template = () => validNeoSet().spec.template;
  it('images and template labels/annotations change in place', () => {
    const after = template();
    after.spec.containers[0].image = 'nginx:1.28';
    after.metadata.labels.track = 'canary';
    after.metadata.annotations = { note: 'x' };
    expect(inPlaceChangeBlockers(template(), after)).toEqual([]);
    expect(inPlaceChangeBlockers(template(), template())).toEqual([]);
  });
  it('names every other changed field', () => {
    const after = template();
    after.spec.containers[0].env = [{ name: 'A', value: '1' }];
    after.spec.containers[0].resources.limits['nvidia.com/gpu'] = '1';
    after.spec.nodeSelector = { disk: 'ssd' };
    after.metadata.name = 'x';
    expect(inPlaceChangeBlockers(template(), after)).toEqual([
      'metadata.name',
      'spec.containers[0].env',
      'spec.containers[0].resources.limits.nvidia.com/gpu',
      'spec.nodeSelector',
    ]);
  });
  it('cpu/memory resize in place (§4.9) unless the QoS class changes or a request/limit goes', () => {
    const cpu = template();
    cpu.spec.containers[0].resources.limits.cpu = '1';
    expect(inPlaceChangeBlockers(template(), cpu)).toEqual([]);
    // limits alone: requests default to them, Guaranteed; a lower request makes it Burstable.
    const burstable = template();
    (burstable.spec.containers[0].resources as Record<string, unknown>).requests = { cpu: '100m' };
    expect(inPlaceChangeBlockers(template(), burstable)).toEqual(['spec.containers[0].resources (QoS class Guaranteed -> Burstable)']);
    const removed = template();
    delete (removed.spec.containers[0].resources.limits as Record<string, unknown>).memory;
    expect(inPlaceChangeBlockers(template(), removed)).toContain('spec.containers[0].resources.limits.memory');
  });
  it('adding or renaming a container is not in place', () => {
    const added = template();
    added.spec.containers.push({ name: 'b', image: 'b:1' });
    expect(inPlaceChangeBlockers(template(), added)).toEqual(['spec.containers']);
    const renamed = template();
    renamed.spec.containers[0].name = 'main';
    expect(inPlaceChangeBlockers(template(), renamed)).toEqual(['spec.containers[0].name']);
  });
});

describe('rules (/validate)', () => {
  it('a valid NeoSet has no issues', () => {
    expect(reviewIssues(parse(validNeoSet()), null, limits)).toEqual([]);
  });

  for (const c of INVALID_CASES.filter((c) => c.by === 'rules' || c.by === 'both')) {
    it(`refuses: ${c.name} (${c.field})`, () => {
      const n = validNeoSet();
      c.change(n);
      const issues = reviewIssues(parse(n), null, limits);
      expect(issues.map((i) => i.path)).toContain(c.field);
      if (c.mentions) expect(issues.map((i) => i.message).join(' ')).toContain(c.mentions);
    });
  }

  for (const c of INVALID_CASES.filter((c) => c.by === 'schema')) {
    it(`the schema refuses: ${c.name}`, () => {
      const n = validNeoSet();
      c.change(n);
      expect(NeoSet.safeParse(n).success).toBe(false);
    });
  }

  it('caps compare exactly: 2 == 2000m is allowed, 2001m is not', () => {
    const n = validNeoSet();
    n.spec.template.spec.containers[0].resources.limits.cpu = '2000m';
    expect(reviewIssues(parse(n), null, limits)).toEqual([]);
    n.spec.template.spec.containers[0].resources.limits.cpu = '2001m';
    expect(reviewIssues(parse(n), null, limits)[0].forbidden).toBe(true);
  });

  it('no caps configured, no cap issues', () => {
    const n = validNeoSet();
    n.spec.template.spec.containers[0].resources.limits.cpu = '64';
    expect(reviewIssues(parse(n), null, DEFAULT_LIMITS)).toEqual([]);
  });

  it('readiness Ready does not require probes', () => {
    const n = validNeoSet();
    n.spec.template.spec.containers.push({ name: 'sidecar', image: 'busybox:1.36' });
    n.spec.updateStrategy = { inPlaceUpdateStrategy: { readiness: 'Ready' } };
    expect(reviewIssues(parse(n), null, limits)).toEqual([]);
  });

  describe('UPDATE', () => {
    const old = parse(validNeoSet());
    const update = (change: (n: any) => void) => {
      const n = validNeoSet();
      change(n);
      return reviewIssues(parse(n), old, limits);
    };
    it.each([
      ['selector', (n: any) => (n.spec.selector.matchExpressions = [{ key: 'app', operator: 'Exists' }])],
      ['serviceName', (n: any) => (n.spec.serviceName = 'other')],
      ['volumeClaimTemplates', (n: any) => (n.spec.volumeClaimTemplates = [{ metadata: { name: 'data' }, spec: {} }])],
      ['podManagementPolicy', (n: any) => (n.spec.podManagementPolicy = 'Parallel')],
    ])('refuses a change of the immutable %s', (field, change) => {
      const issues = update(change);
      expect(issues).toHaveLength(1);
      expect(issues[0].path).toBe(`spec.${field}`);
      expect(issues[0].message).toContain('immutable');
    });

    it('defaults filled on one side only are no change', () => {
      const bare = validNeoSet();
      const stored = parse(bare);
      const explicit = validNeoSet();
      explicit.spec.podManagementPolicy = 'OrderedReady';
      expect(reviewIssues(parse(explicit), stored, limits)).toEqual([]);
    });

    it('InPlaceOnly refuses a template change that cannot be done in place', () => {
      const inPlaceOnly = (n: any) => (n.spec.updateStrategy = { type: 'InPlaceOnly' });
      const before = validNeoSet();
      inPlaceOnly(before);
      const image = validNeoSet();
      inPlaceOnly(image);
      image.spec.template.spec.containers[0].image = 'nginx:1.28';
      expect(reviewIssues(parse(image), parse(before), limits)).toEqual([]);
      const env = validNeoSet();
      inPlaceOnly(env);
      env.spec.template.spec.containers[0].env = [{ name: 'A', value: '1' }];
      const issues = reviewIssues(parse(env), parse(before), limits);
      expect(issues.map((i) => i.path)).toEqual(['spec.template.spec.containers[0].env']);
      expect(issues[0].message).toContain('InPlaceOnly');
    });

    it('ratchets: an issue the stored object already had does not block other edits', () => {
      const strict = { ...limits, maxReplicas: 2 };
      const stored = parse(validNeoSet()); // 3 replicas, stored when the quota was higher
      const edit = validNeoSet();
      edit.spec.updateStrategy = { partition: 1 };
      expect(reviewIssues(parse(edit), stored, strict)).toEqual([]);
      edit.spec.replicas = 4;
      expect(reviewIssues(parse(edit), stored, strict).map((i) => i.path)).toEqual(['spec.replicas']);
    });

    it('an over-quota NeoSet comes down step by step (500 -> 400 -> 100 under a quota of 100); raising it is refused', () => {
      const quota = { ...limits, maxReplicas: 100 };
      const at = (replicas: number) => {
        const n = validNeoSet();
        n.spec.replicas = replicas;
        return parse(n);
      };
      expect(reviewIssues(at(400), at(500), quota)).toEqual([]);
      expect(reviewIssues(at(100), at(400), quota)).toEqual([]);
      expect(reviewIssues(at(400), at(400), quota)).toEqual([]);
      expect(reviewIssues(at(450), at(400), quota)).toEqual([
        { path: 'spec.replicas', message: '450 is over the quota of 100 (NEOSET_MAX_REPLICAS)', forbidden: true },
      ]);
      expect(reviewIssues(at(101), null, quota).map((i) => i.path)).toEqual(['spec.replicas']);
      // The scale subresource alike.
      expect(judgeScale(400, 500, quota).issues).toEqual([]);
      expect(judgeScale(100, 400, quota).issues).toEqual([]);
      expect(judgeScale(450, 400, quota).issues.map((i) => i.path)).toEqual(['spec.replicas']);
      expect(judgeScale(101, null, quota).issues.map((i) => i.path)).toEqual(['spec.replicas']);
    });

    it('the ratchet reads whether the field changed from the objects, not from the messages', () => {
      const capped = { ...limits, maxCpu: parseQuantity('2')! };
      const stored = validNeoSet();
      stored.spec.template.spec.containers[0].resources.limits.cpu = '4'; // stored before the cap
      const other = structuredClone(stored);
      other.spec.updateStrategy = { partition: 1 };
      expect(reviewIssues(parse(other), parse(stored), capped)).toEqual([]);
      for (const cpu of ['8', '3']) {
        const changed = structuredClone(stored);
        changed.spec.template.spec.containers[0].resources.limits.cpu = cpu;
        expect(reviewIssues(parse(changed), parse(stored), capped).map((i) => i.path)).toEqual(['spec.template.spec.containers[0].resources.limits.cpu']);
      }
      const fixed = structuredClone(stored);
      fixed.spec.template.spec.containers[0].resources.limits.cpu = '2';
      expect(reviewIssues(parse(fixed), parse(stored), capped)).toEqual([]);
    });

    it('valueAt reads Kubernetes field paths, bracketed keys included', () => {
      const n = validNeoSet();
      n.spec.template.metadata.labels['app.kubernetes.io/name'] = 'x';
      expect(valueAt(n, 'spec.template.spec.containers[0].resources.limits.cpu')).toBe('500m');
      expect(valueAt(n, 'spec.template.metadata.labels[app.kubernetes.io/name]')).toBe('x');
      expect(valueAt(n, 'spec.template.spec.containers[3].name')).toBeUndefined();
      expect(valueAt(n, 'spec.replicas.deeper')).toBeUndefined();
    });
  });
});

describe('analysis addresses (SPEC §2.3)', () => {
  const ADDRESS = 'spec.updateStrategy.canary.analysis.prometheus.address';
  const withAnalysis = (address: string, replicas = 3) => {
    const n = validNeoSet();
    n.spec.replicas = replicas;
    n.spec.updateStrategy = { canary: { steps: [{ partition: 1 }, { partition: 0 }], analysis: { prometheus: { address, query: 'up', successCondition: 'result == 1' } } } };
    return parse(n);
  };

  it('accepts a listed address, written in any of its forms', () => {
    for (const address of ['http://prometheus:9090', 'http://prometheus:9090/', 'HTTP://Prometheus:9090']) {
      expect(reviewIssues(withAnalysis(address), null, limits)).toEqual([]);
    }
  });

  it('refuses another address, naming the field and the allowed ones (403: a policy, like the quota)', () => {
    const issues = reviewIssues(withAnalysis('http://kubernetes.default:443'), null, limits);
    expect(issues).toEqual([
      { path: ADDRESS, message: '"http://kubernetes.default:443" is not a Prometheus address this install allows; allowed (NEOSET_ANALYSIS_ADDRESSES): http://prometheus:9090', forbidden: true },
    ]);
  });

  it('with none configured (the default), refuses any, saying which variable allows one', () => {
    const [issue] = reviewIssues(withAnalysis('http://prometheus:9090'), null, DEFAULT_LIMITS);
    expect(issue.path).toBe(ADDRESS);
    expect(issue.message).toContain('no Prometheus address is allowed on this install: the operator lists them in NEOSET_ANALYSIS_ADDRESSES (ConfigMap neoset-analysis, key addresses');
  });

  it('a canary without a Prometheus analysis needs no address', () => {
    const n = validNeoSet();
    n.spec.updateStrategy = { canary: { steps: [{ partition: 0 }], analysis: { maxRestarts: 2 } } };
    expect(reviewIssues(parse(n), null, DEFAULT_LIMITS)).toEqual([]);
  });

  describe('UPDATE of a NeoSet stored with an address no longer allowed (the operator removed it)', () => {
    const stored = withAnalysis('http://old-prometheus:9090', 3);
    it('a scale-down, a pause or an image change goes through (the address did not change)', () => {
      expect(reviewIssues(withAnalysis('http://old-prometheus:9090', 2), stored, limits)).toEqual([]);
      const paused = withAnalysis('http://old-prometheus:9090');
      paused.spec.updateStrategy.pause = true;
      expect(reviewIssues(paused, stored, limits)).toEqual([]);
      const image = withAnalysis('http://old-prometheus:9090');
      image.spec.template.spec.containers[0].image = 'nginx:1.28';
      expect(reviewIssues(image, stored, limits)).toEqual([]);
    });
    it('a change to another unlisted address is refused; to a listed one, or removing the analysis, allowed', () => {
      expect(reviewIssues(withAnalysis('http://10.0.0.1:9090'), stored, limits).map((i) => i.path)).toEqual([ADDRESS]);
      expect(reviewIssues(withAnalysis('http://prometheus:9090'), stored, limits)).toEqual([]);
      const none = withAnalysis('http://old-prometheus:9090');
      delete none.spec.updateStrategy.canary!.analysis!.prometheus;
      expect(reviewIssues(none, stored, limits)).toEqual([]);
    });
  });
});

describe('warnings', () => {
  const warn = (change: (n: any) => void, old: unknown = null) => {
    const n = validNeoSet();
    change(n);
    return neosetWarnings(parse(n), old === null ? null : parse(old), limits);
  };
  it('a plain NeoSet has none', () => {
    expect(warn(() => {})).toEqual([]);
  });
  it.each([
    ['partition > replicas', (n: any) => (n.spec.updateStrategy = { partition: 5 }), 'partition (5) > spec.replicas (3)'],
    ['maxUnavailable >= replicas', (n: any) => (n.spec.updateStrategy = { maxUnavailable: '100%' }), 'maxUnavailable (100%) >= spec.replicas (3)'],
    ['minReadySeconds >= timeoutSeconds', (n: any) => (n.spec.minReadySeconds = 600), 'minReadySeconds (600) >= inPlaceUpdateStrategy.timeoutSeconds (600)'],
    ['no history to roll back to', (n: any) => (n.spec.revisionHistoryLimit = 0), 'nothing to roll back to'],
    ['no serviceName', (n: any) => delete n.spec.serviceName, 'serviceName is unset'],
    ['a floating image tag', (n: any) => (n.spec.template.spec.containers[0].image = 'registry:5000/nginx'), 'no fixed tag'],
    ['an uncapped container', (n: any) => delete n.spec.template.spec.containers[0].resources, 'limits.cpu is unset'],
    ['partition with canary steps', (n: any) => (n.spec.updateStrategy = { partition: 2, canary: { steps: [{ partition: 1 }] } }), 'partition (2) is ignored: canary.steps drive the partition'],
  ])('%s', (_, change, text) => {
    const warnings = warn(change);
    expect(warnings.join('\n')).toContain(text);
    for (const w of warnings) expect(w).not.toMatch(/\n/);
  });
  it('one replica does not warn about maxUnavailable', () => {
    expect(warn((n) => (n.spec.replicas = 1))).toEqual([]);
  });
  it('an UPDATE that will recreate pods under InPlaceIfPossible says so', () => {
    const warnings = warn((n) => (n.spec.template.spec.containers[0].command = ['sh']), validNeoSet());
    expect(warnings).toEqual(['pods will be recreated, not updated in place: spec.template.spec.containers[0].command changed']);
  });
  it('resolves percentages up, at least 1', () => {
    // The core's one resolver, which takes the spec: the same figures through it.
    const resolveMaxUnavailable = (maxUnavailable: number | string, replicas: number) => resolveBudget(NeoSetSpec.parse({ ...(validNeoSet().spec as object), replicas, updateStrategy: { maxUnavailable } }));
    expect(resolveMaxUnavailable('25%', 10)).toBe(3);
    expect(resolveMaxUnavailable('1%', 3)).toBe(1);
    expect(resolveMaxUnavailable(2, 10)).toBe(2);
  });
});

describe("ordinal 0's pod and when to dry-run it", () => {
  it('carries labels, hostname, subdomain, the readiness gate and claim volumes', () => {
    const n = validNeoSet();
    n.spec.volumeClaimTemplates = [{ metadata: { name: 'data' }, spec: {} }];
    n.spec.template.spec.volumes = [{ name: 'data', emptyDir: {} }, { name: 'cfg', emptyDir: {} }];
    const pod = ordinalPod(parse(n), 'web', 'ns1', 0);
    expect(pod.metadata).toMatchObject({
      name: 'web-0',
      namespace: 'ns1',
      labels: { app: 'web', 'neoset.neo.io/name': 'web', 'neoset.neo.io/pod-name': 'web-0', 'apps.kubernetes.io/pod-index': '0' },
    });
    expect(pod.spec).toMatchObject({
      hostname: 'web-0',
      subdomain: 'web',
      readinessGates: [{ conditionType: 'InPlaceUpdateReady' }],
      volumes: [{ name: 'cfg', emptyDir: {} }, { name: 'data', persistentVolumeClaim: { claimName: 'data-web-0' } }],
    });
  });

  it('CREATE dry-runs; an UPDATE dry-runs only when the template changed', () => {
    const stored = parse(validNeoSet());
    expect(judgeNeoSet({ namespace: 'ns', neoset: stored, old: null }, limits).dryRunPod?.metadata.name).toBe('web-0');
    const partition = validNeoSet();
    partition.spec.updateStrategy = { partition: 2 };
    expect(judgeNeoSet({ namespace: 'ns', neoset: parse(partition), old: stored }, limits).dryRunPod).toBeNull();
    const image = validNeoSet();
    image.spec.template.spec.containers[0].image = 'nginx:1.28';
    expect(judgeNeoSet({ namespace: 'ns', neoset: parse(image), old: stored }, limits).dryRunPod).not.toBeNull();
  });

  it('does not dry-run what the rules already refuse', () => {
    const n = validNeoSet();
    n.spec.replicas = 5000;
    const verdict = judgeNeoSet({ namespace: 'ns', neoset: parse(n), old: null }, limits);
    expect(verdict.issues).toHaveLength(1);
    expect(verdict.dryRunPod).toBeNull();
  });

  it('the scale subresource keeps the quota', () => {
    expect(judgeScale(1001, 3, limits).issues[0]).toMatchObject({ path: 'spec.replicas', forbidden: true });
    expect(judgeScale(1000, 3, limits).issues).toEqual([]);
    expect(judgeScale(1001, 1001, limits).issues).toEqual([]);
  });
});

describe('sameJson', () => {
  it('treats an undefined key as absent and compares deeply', () => {
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJson({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] })).toBe(false);
    expect(sameJson([1], { 0: 1 })).toBe(false);
  });
});
