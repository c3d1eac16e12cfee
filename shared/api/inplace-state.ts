// The pod annotation neoset.neo.io/inplace-update-state (SPEC §4.4) as a zod schema: the only memory of
// an in-place update in flight, and the one definition of its shape — the type is inferred from it.
// Written by markDraining and patchImages, removed by finishInPlaceUpdate; read back from pods, which
// anyone who may edit a pod (or forge a Pod event) can write: it is parsed like every other input
// (shared/core/pods/in-place-state.ts parses it, once per text).
//
// A state is readable when it names its revision, its phase and when its drain started: without
// those nothing can be resumed, and it reads as no state (the next update of the pod overwrites it).
// A wrong optional field is dropped rather than trusted (the state stays readable); fields this
// version does not know are kept, so that a write that carries the state on keeps them too.
import { z } from 'zod';

const byContainer = (value: z.ZodType<string>, description: string) => z.record(z.string(), value).optional().catch(undefined).describe(description);

const quantities = z.record(z.string(), z.union([z.string(), z.number()])).optional();

/** §4.9: a container's resize target — only resources (1.37's ValidatePodResize refuses a resizePolicy change through pods/resize). */
export const ResizeTargetSchema = z.object({ resources: z.object({ requests: quantities, limits: quantities }) });

export const InPlaceStateSchema = z.looseObject({
  /** The revision (ControllerRevision name) the pod is being moved to. */
  revision: z.string(),
  phase: z.enum(['Draining', 'Updating']),
  drainStartedAt: z.string(),
  readiness: z.enum(['Probe', 'Ready']).optional().catch(undefined).describe('inPlaceUpdateStrategy.readiness when the update started: what "done" means for this pod (§4.5).'),
  startedAt: z.string().optional().catch(undefined),
  targetImages: byContainer(z.string(), 'container name -> image being rolled out.'),
  previousImageIDs: byContainer(z.string(), 'container name -> imageID reported before the patch.'),
  previousContainerIDs: byContainer(
    z.string(),
    'container name -> containerID reported before the patch: a new container ID also proves the restart when the new tag resolves to the same digest as the old one (same imageID).',
  ),
  targetResources: z
    .record(z.string(), ResizeTargetSchema)
    .optional()
    .catch(undefined)
    .describe('§4.9: container name -> the cpu/memory the update resizes it to through pods/resize. Absent or empty: no resize.'),
  resizeRefused: z
    .string()
    .optional()
    .catch(undefined)
    .describe("§4.9: the API server refused the resize (PodResizeValidator: beyond the node's allocatable) — its message; Failed (ResizeInfeasible) until a new template re-targets the pod."),
});

export type InPlaceState = z.infer<typeof InPlaceStateSchema>;
