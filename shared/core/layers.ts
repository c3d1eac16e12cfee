// The layers of the core, bottom first — the order to read it in. A file may import (at run time)
// from its own layer and the layers below it, never from one above: so each SPEC section's rules
// can be read knowing only what is under them, and there is no import cycle to untangle.
// test/unit/layers.test.ts holds every file of shared/core to this list (a file must be in exactly
// one layer; a folder entry ends with '/'; the longest entry that holds a path places it).
//
// Type-only imports (`import type`) are exempt: they are erased before the code runs, so they create
// no evaluation order and no behaviour; the wire vocabulary may name a type defined beside the rule
// that reads it (objects.ts names resize/resources.ts's ResourceRequirements), and a rule's types may
// name the facts it reads from the layer above it only as types, never call into it.
export interface Layer {
  name: string;
  holds: readonly string[];
}

export const CORE_LAYERS: readonly Layer[] = [
  {
    name: 'wire types and helpers',
    holds: ['objects.ts', 'snapshot.ts', 'plan.ts', 'actions.ts', 'failure.ts', 'json.ts', 'time.ts', 'duration.ts', 'field-path.ts', 'selector.ts', 'percent.ts', 'layers.ts'],
  },
  {
    name: 'pod facts (§4.1 identity and ownership, §4.12 which ordinals are in range, §4.5 availability, the pod annotations; §4.9 resize: a pod\'s resources and its resize step)',
    holds: ['pods/', 'resize/', 'ownership.ts', 'ordinals.ts'],
  },
  { name: 'observed facts (the snapshot read once, §4.2 revisions)', holds: ['revisions/', 'observed.ts'] },
  { name: 'the rollout target (§4.11 canary progress, the partition, the target revision)', holds: ['canary/', 'target.ts'] },
  { name: '§4.5 readiness', holds: ['readiness/'] },
  { name: '§4.4 updating (the budget included)', holds: ['update/'] },
  { name: '§4.10 update hooks', holds: ['hooks/'] },
  { name: '§4.3 scaling, §4.1 adoption', holds: ['scaling/', 'adoption.ts'] },
  { name: '§4.6 status', holds: ['status/'] },
  { name: 'decide (§2: the order of the parts; §4.12 what a status write tells subscribers)', holds: ['pod-step.ts', 'decide.ts', 'event-relevance.ts', 'in-flight.ts', 'notifications.ts', 'index.ts'] },
];

/** The index in CORE_LAYERS of the layer that holds `path` (relative to shared/core), or -1. */
export function layerOf(path: string): number {
  let best = -1;
  let length = -1;
  CORE_LAYERS.forEach((layer, i) => {
    for (const entry of layer.holds) {
      const holds = entry.endsWith('/') ? path.startsWith(entry) : path === entry;
      if (holds && entry.length > length) [best, length] = [i, entry.length];
    }
  });
  return best;
}
