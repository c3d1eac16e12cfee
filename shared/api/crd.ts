// Builds the NeoSet CustomResourceDefinition from the zod schemas (SPEC §3: one source of truth).
// zod's JSON Schema is turned into a Kubernetes *structural* OpenAPI v3 schema: no $schema, no
// propertyNames, no additionalProperties beside properties, int-or-string as the extension.
import { z } from 'zod';
import { NeoSetSpec, NeoSetStatus } from './neoset.ts';
import { GROUP, KIND, PLURAL, SHORT_NAMES, SINGULAR, VERSION } from './names.ts';

type Json = { [key: string]: unknown };
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** Rewrites one zod JSON Schema node (and its children) into a structural schema node. */
export function toStructural(node: Json): Json {
  if (node['x-kubernetes-int-or-string']) {
    const out: Json = { 'x-kubernetes-int-or-string': true };
    if (node.description) out.description = node.description;
    if (node.default !== undefined) out.default = node.default;
    if (node['x-kubernetes-validations']) out['x-kubernetes-validations'] = node['x-kubernetes-validations'];
    return out;
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema' || key === 'propertyNames') continue;
    if ((key === 'maximum' && value === MAX_SAFE) || (key === 'minimum' && value === -MAX_SAFE)) continue;
    if (key === 'properties') {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, Json>).map(([name, child]) => [name, toStructural(child)]),
      );
    } else if (key === 'items') {
      out.items = toStructural(value as Json);
    } else if (key === 'additionalProperties') {
      // A map (record) keeps its value schema; an open object says so with the preserve extension.
      if (typeof value === 'object' && value !== null && Object.keys(value).length > 0 && !node.properties) {
        out.additionalProperties = toStructural(value as Json);
      }
    } else {
      out[key] = value;
    }
  }
  if (out.type === 'integer') out.format = out.format ?? 'int32';
  return out;
}

const jsonSchema = (schema: z.ZodType) => toStructural(z.toJSONSchema(schema, { io: 'input' }) as Json);

export function buildCrd(): Json {
  const spec = jsonSchema(NeoSetSpec);
  spec.description = 'Desired state of a NeoSet: a StatefulSet whose pods are updated in place.';
  const status = jsonSchema(NeoSetStatus);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${PLURAL}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { kind: KIND, listKind: `${KIND}List`, plural: PLURAL, singular: SINGULAR, shortNames: SHORT_NAMES, categories: ['all'] },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: {
            status: {},
            scale: {
              specReplicasPath: '.spec.replicas',
              statusReplicasPath: '.status.replicas',
              labelSelectorPath: '.status.labelSelector',
            },
          },
          additionalPrinterColumns: [
            { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', description: 'Desired pods.' },
            { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Ready pods.' },
            { name: 'Updated', type: 'integer', jsonPath: '.status.updatedReplicas', description: 'Pods on the update revision.' },
            { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Rollout phase.' },
            { name: 'Current', type: 'string', jsonPath: '.status.currentImage', description: 'Image of the stable revision.' },
            { name: 'Target', type: 'string', jsonPath: '.status.targetImage', description: 'Image of the update revision.' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
            // kubectl get -o wide; the state gauges read it (shared/metrics/state-gauges.ts).
            { name: 'Step', type: 'integer', jsonPath: '.status.canary.stepIndex', description: 'The automated canary step running now.', priority: 1 },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description:
                'NeoSet: a StatefulSet for production rollouts — in-place image updates, canary and batched steps (partition, maxUnavailable, pause), stable-version scale-up, rollback from ControllerRevision history.',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string', description: 'APIVersion: neo.io/v1alpha1.' },
                kind: { type: 'string', description: 'Kind: NeoSet.' },
                metadata: { type: 'object' },
                spec,
                status,
              },
            },
          },
        },
      ],
    },
  };
}
