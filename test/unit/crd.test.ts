import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { NeoSetSpec } from '../../shared/api/neoset.ts';
import { CRD_PATH, renderCrd } from '../../shared/api/gen-crd.ts';
import { SPEC_DEFAULTS } from '../fixtures/spec-defaults.ts';

type Schema = { type?: string; properties?: Record<string, Schema>; items?: Schema; description?: string; [k: string]: unknown };

describe('the generated CRD', () => {
  it('is up to date with the zod schemas (run `npm run gen` when this fails)', () => {
    expect(readFileSync(CRD_PATH, 'utf8')).toBe(renderCrd());
  });

  const crd = parse(renderCrd());
  const version = crd.spec.versions[0];
  const spec: Schema = version.schema.openAPIV3Schema.properties.spec;

  it('describes every field, so kubectl explain documents it', () => {
    const undocumented: string[] = [];
    const walk = (s: Schema, path: string) => {
      if (!s.description && !path.endsWith('[]') && !/\.(limits|requests)\.\*$/.test(path)) undocumented.push(path);
      for (const [k, child] of Object.entries(s.properties ?? {})) walk(child, `${path}.${k}`);
      if (s.items) walk(s.items, `${path}[]`);
    };
    walk(spec, 'spec');
    walk(version.schema.openAPIV3Schema.properties.status, 'status');
    expect(undocumented).toEqual([]);
  });

  it('is structural: no JSON-Schema-only keywords, int-or-string as the extension', () => {
    const text = JSON.stringify(version.schema);
    expect(text).not.toMatch(/"\$schema"|"propertyNames"|"anyOf"|"oneOf"|"const"/);
    expect(spec.properties!.updateStrategy.properties!.maxUnavailable).toMatchObject({ 'x-kubernetes-int-or-string': true, default: 1 });
  });

  it('carries the defaults, with empty-object defaults so nested defaults apply', () => {
    const us = spec.properties!.updateStrategy;
    expect(us.default).toEqual({});
    expect(us.properties!.type.default).toBe('InPlaceIfPossible');
    expect(us.properties!.inPlaceUpdateStrategy.default).toEqual({});
    expect(us.properties!.inPlaceUpdateStrategy.properties!.timeoutSeconds.default).toBe(600);
    expect(spec.properties!.replicas.default).toBe(1);
  });

  it('has the status and scale subresources, short name, category and printer columns', () => {
    expect(version.subresources).toEqual({
      status: {},
      scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' },
    });
    expect(crd.spec.names.shortNames).toEqual(['neo']);
    expect(crd.spec.names.categories).toEqual(['all']);
    expect(version.additionalPrinterColumns.map((c: { name: string }) => c.name.toUpperCase())).toEqual(['REPLICAS', 'READY', 'UPDATED', 'PHASE', 'CURRENT', 'TARGET', 'AGE', 'STEP']);
    // STEP only in kubectl get -o wide.
    expect(version.additionalPrinterColumns.filter((c: { priority?: number }) => (c.priority ?? 0) > 0).map((c: { name: string }) => c.name)).toEqual(['Step']);
  });
});

describe('NeoSetSpec defaults', () => {
  it('fills every default of SPEC §3 from replicas, selector and template alone', () => {
    const spec = NeoSetSpec.parse({
      selector: { matchLabels: { app: 'x' } },
      template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    });
    expect(spec).toMatchObject({ replicas: 1, ...SPEC_DEFAULTS });
  });
});
