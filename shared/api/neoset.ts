// The NeoSet API (SPEC §3) as zod schemas: the single source of the TypeScript types, of the
// defaults the functions apply, and of the CRD's OpenAPI schema (see crd.ts).
import { z } from 'zod';

const intOrString = (description: string) =>
  z.union([z.int(), z.string()]).meta({ description, 'x-kubernetes-int-or-string': true });

/**
 * A budget of pods (maxUnavailable): an integer >= 1 or a percentage from 1% to 100% (SPEC §3, §5).
 * Admission names the problem (shared/admission/validate.ts); the API server enforces the same rule
 * itself with this CEL, so that it holds for the writes the webhooks do not see — pause, resume, a
 * partition or budget change while admission is down (SPEC §2.5, knative/admission-webhooks.yaml) —
 * and zod leaves it to them: a stored value past it must not stop decide() from reading the NeoSet.
 */
const budget = (description: string) =>
  z.union([z.int(), z.string()]).meta({
    description,
    'x-kubernetes-int-or-string': true,
    'x-kubernetes-validations': [
      {
        rule: "type(self) == int ? self >= 1 : self.matches('^[0-9]{1,10}%$') && int(self.substring(0, size(self) - 1)) >= 1 && int(self.substring(0, size(self) - 1)) <= 100",
        message: 'must be an integer >= 1 or a percentage from 1% to 100% (such as "25%")',
      },
    ],
  });

const stringMap = (description: string) => z.record(z.string(), z.string()).optional().describe(description);

export const LabelSelectorRequirement = z.object({
  key: z.string().min(1).describe('The label key that the selector applies to.'),
  operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']).describe('How the key relates to the values.'),
  values: z.array(z.string()).optional().describe('Values for In and NotIn; empty for Exists and DoesNotExist.'),
});

export const LabelSelector = z
  .object({
    matchLabels: stringMap('Labels a pod must carry, all of them, with these values.'),
    matchExpressions: z
      .array(LabelSelectorRequirement)
      .optional()
      .describe('Label selector requirements, all of which must hold.'),
  })
  .describe(
    "Label query over the pods this NeoSet owns. Must select the template's labels. Immutable.",
  );

// The pod template is typed only as deep as NeoSet itself reads it (labels and annotations, and per
// container name, image, readinessProbe and resources); everything else is preserved unvalidated.
// Why: the full PodSpec schema is several hundred kilobytes (it would dwarf the CRD and must track
// every Kubernetes release), and the API server validates the real Pod anyway — admission
// dry-run-creates ordinal 0's Pod so an invalid template is refused when the NeoSet is written.
export const Container = z
  .looseObject({
    name: z.string().min(1).describe('Container name, unique within the pod (DNS label).'),
    image: z.string().min(1).describe('Container image. An image change is updated in place (the pod is patched; kubelet restarts the container).'),
    readinessProbe: z
      .looseObject({})
      .optional()
      .meta({
        description: 'Readiness probe (core/v1 Probe). Required on every container when readiness is Probe.',
        'x-kubernetes-preserve-unknown-fields': true,
      }),
    resources: z
      .looseObject({
        limits: z
          .record(z.string(), intOrString('Quantity.'))
          .optional()
          .describe('Maximum compute resources (e.g. cpu: 500m, memory: 1Gi); checked against admission caps.'),
        requests: z.record(z.string(), intOrString('Quantity.')).optional().describe('Requested compute resources.'),
      })
      .optional()
      .meta({
        description:
          'Compute resources (core/v1 ResourceRequirements). A change of cpu/memory requests or limits is updated in place under InPlaceIfPossible/InPlaceOnly through the Pod resize subresource (the pod keeps its UID; kubelet restarts the container only where resizePolicy says RestartContainer); a change of the QoS class, of another resource, or removing a request or limit cannot be resized: the pod is recreated (InPlaceIfPossible) or admission refuses it (InPlaceOnly). A resize beyond the node allocatable, or one kubelet reports Infeasible, fails the rollout with reason ResizeInfeasible.',
        'x-kubernetes-preserve-unknown-fields': true,
      }),
    resizePolicy: z
      .array(
        z.looseObject({
          resourceName: z.string().describe('cpu or memory.'),
          restartPolicy: z.string().describe('NotRequired (resized without a restart, the default) or RestartContainer (kubelet restarts the container to apply it).'),
        }),
      )
      .optional()
      .describe('How kubelet applies an in-place resize of each resource (core/v1 ContainerResizePolicy). Immutable on a running pod: changing it recreates the pod.'),
  })
  .meta({ description: 'A container (core/v1 Container); fields other than the typed ones are kept as written.', 'x-kubernetes-preserve-unknown-fields': true });

export const ObjectMetaTemplate = z
  .looseObject({
    labels: stringMap('Labels of every pod. Must be selected by spec.selector.'),
    annotations: stringMap('Annotations of every pod.'),
  })
  .meta({ description: 'Metadata of the pods created from this template (labels and annotations).', 'x-kubernetes-preserve-unknown-fields': true });

export const PodSpecTemplate = z
  .looseObject({
    containers: z.array(Container).min(1).describe('The containers of every pod; the first is the main container whose image the status reports.'),
  })
  .meta({ description: 'Pod spec (core/v1 PodSpec). Validated in full by the API server at admission (dry-run).', 'x-kubernetes-preserve-unknown-fields': true });

export const PodTemplateSpec = z
  .object({
    metadata: ObjectMetaTemplate.optional(),
    spec: PodSpecTemplate,
  })
  .describe('The pod every ordinal runs. Each distinct template is stored as a ControllerRevision.');

export const PersistentVolumeClaimTemplate = z
  .looseObject({
    metadata: z
      .looseObject({
        name: z.string().min(1).describe('Claim name; the PVC of ordinal i is <name>-<neoset>-<i>.'),
        labels: stringMap('Labels of the PVCs.'),
        annotations: stringMap('Annotations of the PVCs.'),
      })
      .meta({ description: 'Metadata of the claim; name is required.', 'x-kubernetes-preserve-unknown-fields': true }),
    spec: z
      .looseObject({})
      .meta({ description: 'PVC spec (core/v1 PersistentVolumeClaimSpec).', 'x-kubernetes-preserve-unknown-fields': true }),
  })
  .meta({ description: 'A PersistentVolumeClaim template (core/v1).', 'x-kubernetes-preserve-unknown-fields': true });

export const RetentionPolicyValue = z.enum(['Retain', 'Delete']);

export const InPlaceUpdateStrategy = z
  .object({
    readiness: z
      .enum(['Probe', 'Ready'])
      .default('Probe')
      .describe(
        'When an in-place-updated pod counts as done. Probe: every changed container is ready on the new image (needs a readinessProbe on each container). Ready: the ContainersReady condition is True on the new images.',
      ),
    gracePeriodSeconds: z
      .int()
      .min(0)
      .default(0)
      .describe('Seconds a pod stays out of Service endpoints (InPlaceUpdateReady=False) before its image is patched.'),
    timeoutSeconds: z
      .int()
      .min(1)
      .default(600)
      .describe('An in-place update not done this many seconds after the image patch fails the rollout (phase Failed).'),
  })
  .prefault({})
  .describe('How one pod is updated in place.');

// §4.11 automated canary: Argo Rollouts' step language over NeoSet's partition.
export const CanaryStep = z
  .object({
    partition: intOrString(
      'Hold the first partition pods (by position: spec.updateStrategy.partition) on the current revision: an integer, or a percentage of replicas ("50%", rounded up). The step is complete when every pod >= partition runs the update revision and is available.',
    ).optional(),
    pause: z
      .object({
        duration: z
          .string()
          .optional()
          .describe('A Go duration ("30s", "10m", "1h30m"): the pause ends by itself this long after the step before it completed. Absent: wait for `kubectl neoset rollout promote`.'),
      })
      .optional()
      .describe('Wait before the next step.'),
  })
  .describe('One canary step: exactly one of partition or pause.');

export const PrometheusAnalysis = z
  .object({
    address: z.string().min(1).describe('Base URL of the Prometheus HTTP API, e.g. http://prometheus.monitoring:9090.'),
    query: z.string().min(1).describe('A PromQL instant query; its result must be one number (a scalar or a one-sample vector).'),
    successCondition: z
      .string()
      .min(1)
      .describe('`result <op> <number>` with op one of < <= > >= == !=, e.g. "result < 0.05". The step passes only when it holds.'),
  })
  .describe('A Prometheus query that must hold at the end of each step.');

export const CanaryAnalysis = z
  .object({
    maxRestarts: z
      .int()
      .min(0)
      .optional()
      .describe('An updated pod with more container restarts than this (the update\'s own restart excluded) aborts the rollout at once.'),
    prometheus: PrometheusAnalysis.optional(),
  })
  .describe('How the canary is judged; a failed analysis aborts the rollout (pods return in place to currentRevision).');

export const Canary = z
  .object({
    steps: z.array(CanaryStep).describe('The steps, in order; each new update revision starts at step 0. partition is driven by them.'),
    analysis: CanaryAnalysis.optional(),
  })
  .describe('Automated canary (SPEC 4.11): steps, timed pauses, analysis and abort.');

// §4.12 update priority: OpenKruise's updateStrategy.priorityStrategy (apis/apps/pub/update_priority.go).
export const PriorityWeightTerm = z
  .object({
    weight: z.int().min(1).max(100).describe('Added to the priority of every pod matchSelector selects, 1 to 100.'),
    matchSelector: LabelSelector.describe('The pods (by their labels) that get this weight. Must not be empty.'),
  })
  .describe('One weight term: a pod\'s priority is the sum of the weights of the terms whose selector selects it.');

export const PriorityOrderTerm = z
  .object({
    orderedKey: z.string().min(1).max(317).describe('A label key. Pods carrying it are ordered by the integer at the end of its value, largest first ("db-10" before "db-5"; no digits: 0).'),
  })
  .describe('One order term: pods carrying the first term\'s label go first, then those carrying the second\'s, and so on; pods with none of the keys go last.');

export const PriorityStrategy = z
  .object({
    weightPriority: z.array(PriorityWeightTerm).max(20).optional().describe('Weight terms: pods with a higher sum of weights are updated first.'),
    orderPriority: z.array(PriorityOrderTerm).max(20).optional().describe('Order terms, the first one first. Exclusive with weightPriority.'),
  })
  .describe(
    'Which pods the rollout updates first (OpenKruise priorityStrategy): among the pods the partition allows (position >= partition), higher priority first, ties highest ordinal first. The partition keeps its meaning; only one of weightPriority and orderPriority may be set. E.g. a database updates its replicas before its primary, whatever the primary\'s ordinal.',
  );

export const UpdateStrategyType = z.enum(['InPlaceIfPossible', 'InPlaceOnly', 'ReCreate', 'OnDelete']);

export const UpdateStrategy = z
  .object({
    type: UpdateStrategyType.default('InPlaceIfPossible').describe(
      'InPlaceIfPossible: patch images and resize cpu/memory in place, recreate the pod for any other change. InPlaceOnly: in place or not at all. ReCreate: delete and recreate like a StatefulSet. OnDelete: update a pod only when the user deletes it.',
    ),
    partition: z
      .int()
      .min(0)
      .default(0)
      .describe(
        'Pods at position >= partition are updated; the first partition pods stay on the current revision (canary). A position counts the pods in ordinal order from spec.ordinals.start, reserved ordinals skipped: without start and reserveOrdinals it is the ordinal (the StatefulSet controller compares ordinal - start).',
      ),
    maxUnavailable: budget(
      'Most pods that may be unavailable at once during an update: an integer >= 1 or a percentage of replicas ("20%", rounded up, at least 1).',
    ).default(1),
    pause: z.boolean().default(false).describe('true: start no new pod updates (updates in flight finish).'),
    inPlaceUpdateStrategy: InPlaceUpdateStrategy,
    canary: Canary.optional(),
    priorityStrategy: PriorityStrategy.optional(),
  })
  .prefault({})
  .describe('How pods move to a new revision.');

// §4.12 scale budget: OpenKruise's scaleStrategy.maxUnavailable (apis/apps/v1beta1/statefulset_types.go).
export const ScaleStrategy = z
  .object({
    maxUnavailable: budget(
      'Parallel only: at most this many pods 0..replicas-1 not Running and Ready at once while pods are created — an integer >= 1 or a percentage of replicas ("20%", rounded down, at least 1). A pod is created only while fewer are not Ready, so a burst of new pods starts a few at a time. Absent: no limit (all at once).',
    ).optional(),
  })
  .describe('How pods are created on a scale-up (OpenKruise scaleStrategy).');

export const LifecycleHook = z
  .object({
    labelsHandler: z
      .record(z.string(), z.string())
      .refine((m) => Object.keys(m).length > 0, 'at least one label')
      .describe(
        'Labels the hook owner puts on the pods it guards. preUpdate: NeoSet waits until the owner removes them (its "go"). postUpdate: NeoSet waits until the owner puts them back (its "re-joined").',
      ),
    timeoutSeconds: z.int().min(1).default(600).describe('A wait longer than this fails the rollout with reason HookTimeout, naming the pod and the hook.'),
  })
  .describe('One update hook (the OpenKruise lifecycle-hook label handshake).');

export const Lifecycle = z
  .object({
    preUpdate: LifecycleHook.optional().describe(
      'Before a pod is drained for an update: its label neoset.neo.io/lifecycle-state becomes PreparingUpdate and NeoSet waits for the handler labels to be removed; then Updating.',
    ),
    postUpdate: LifecycleHook.optional().describe(
      'After a pod is updated and available: its state becomes Updated and NeoSet waits for the handler labels to be back; then Normal.',
    ),
  })
  .describe(
    'Update hooks (SPEC §4.10). A pod counts against maxUnavailable from PreparingUpdate until Normal; every state change is also sent as a CloudEvent (type io.neo.neoset.lifecycle.<state>, the identity and state of the pod as data: name, namespace, uid, phase, conditions, the NeoSet labels and the hook labels) to $K_SINK.',
  );

// §4.12 start and reserved ordinals: the native StatefulSet's spec.ordinals (GA 1.31) and OpenKruise's
// reserveOrdinals. An ordinal has at most 9 digits: the pod name <neoset>-<ordinal> is its hostname,
// a DNS label of at most 63 characters, and a NeoSet name at most 52 (admission/validate.ts).
export const MAX_ORDINAL = 999_999_999;
/** Entries of spec.reserveOrdinals: Kruise has no bound; 100 ranges cover any retirement plan and keep the decision's walk short. */
export const MAX_RESERVE_ORDINALS = 100;

export const Ordinals = z
  .object({
    start: z
      .int()
      .min(0)
      .max(MAX_ORDINAL)
      .default(0)
      .describe(
        'The first ordinal: pods are <name>-<start>, <name>-<start+1>, ... (as the StatefulSet\'s spec.ordinals.start). A change moves the pods as the StatefulSet controller does: the new ordinals are created, the ones left out are condemned and deleted as on a scale-down (highest first; their claims as whenScaled says).',
      ),
  })
  .describe('The numbering of the pods (StatefulSet spec.ordinals).');

export const NeoSetSpec = z.object({
  replicas: z
    .int()
    .min(0)
    .default(1)
    .describe(
      'Number of pods. They take the first replicas ordinals from spec.ordinals.start (default 0) that spec.reserveOrdinals does not reserve: 0..replicas-1 without either.',
    ),
  ordinals: Ordinals.optional(),
  reserveOrdinals: z
    .array(
      intOrString(
        'An ordinal (an integer, e.g. 3) or an inclusive range "a-b" (e.g. "3-5"), each from 0 to 999999999.',
      ),
    )
    .max(MAX_RESERVE_ORDINALS)
    .optional()
    .describe(
      'Ordinals never used (OpenKruise reserveOrdinals), e.g. to retire db-3 whose disk is lost: replicas still counts pods, so the next free ordinal takes its place. A pod on an ordinal that becomes reserved is deleted as on a scale-down and its claims follow whenScaled. At most 100 entries.',
    ),
  selector: LabelSelector,
  serviceName: z
    .string()
    .optional()
    .describe('Headless Service that gives pods stable DNS (pod hostname/subdomain). Immutable.'),
  template: PodTemplateSpec,
  volumeClaimTemplates: z
    .array(PersistentVolumeClaimTemplate)
    .default([])
    .describe('One PVC per claim per ordinal, named <claim>-<neoset>-<ordinal>, mounted as a volume of that name. Immutable but for one change: raising an existing template\'s spec.resources.requests.storage expands the existing PVCs in place (their StorageClass must allow volume expansion), highest ordinal first, within the rollout\'s partition and maxUnavailable, not while paused or under OnDelete; a pod whose claims resize counts as unavailable and is not updated until each claim reports the request in status.capacity (condition ClaimsResized). A shrink, adding or removing a template, or any other change is refused. A failed resize (ControllerResizeError, NodeResizeError, *Infeasible) fails the rollout with reason VolumeResizeFailed.'),
  podManagementPolicy: z
    .enum(['OrderedReady', 'Parallel'])
    .default('OrderedReady')
    .describe('OrderedReady: create and remove pods one ordinal at a time, in order. Parallel: all at once. Immutable.'),
  persistentVolumeClaimRetentionPolicy: z
    .object({
      whenDeleted: RetentionPolicyValue.default('Retain').describe('What happens to PVCs when the NeoSet is deleted.'),
      whenScaled: RetentionPolicyValue.default('Retain').describe('What happens to PVCs of ordinals removed by scale-down.'),
    })
    .prefault({})
    .describe('Lifecycle of the PVCs created from volumeClaimTemplates (StatefulSet semantics).'),
  minReadySeconds: z
    .int()
    .min(0)
    .default(0)
    .describe('Seconds a pod must be Ready before it counts as available.'),
  revisionHistoryLimit: z
    .int()
    .min(0)
    .default(10)
    .describe('ControllerRevisions kept beyond those in use; older ones are pruned.'),
  updateStrategy: UpdateStrategy,
  scaleStrategy: ScaleStrategy.optional(),
  lifecycle: Lifecycle.optional(),
});

/** In the seed's order: a phase's index is its number in the neoset_phase gauge (SPEC §4.8), 0 = Idle … 5 = Failed. */
export const Phase = z.enum(['Idle', 'Canary', 'RollingOut', 'Paused', 'Completed', 'Failed']);

export const ConditionType = z.enum(['Available', 'Progressing', 'Paused', 'ReadyForUpgrade']);

export const Condition = z
  .object({
    type: z.string().describe('Available, Progressing, Paused, ReadyForUpgrade, or ClaimsResized (with volumeClaimTemplates that request storage).'),
    status: z.enum(['True', 'False', 'Unknown']).describe('True, False or Unknown.'),
    reason: z.string().describe('CamelCase reason for the last transition.'),
    message: z.string().describe('Human-readable detail.'),
    lastTransitionTime: z.string().describe('When status last changed (RFC 3339).'),
    observedGeneration: z.int().min(0).optional().describe('The generation the condition was computed from.'),
  })
  .describe('A metav1.Condition.');

const count = (description: string) => z.int().min(0).optional().describe(description);

/**
 * What a recorded resourceVersion may hold: a comparable version (KEP-5504: decimal, no leading zero) of
 * at most 19 digits — etcd's revisions are int64, and the API server answers 400 to a version past
 * uint64, which 20 digits can be.
 */
export const RECORDED_VERSION_PATTERN = '^[1-9][0-9]{0,18}$';
const RecordedVersion = z.string().regex(new RegExp(RECORDED_VERSION_PATTERN));

export const NeoSetStatus = z
  .object({
    observedGeneration: count('The generation of the spec this status was computed from.'),
    replicas: count('Pods that exist.'),
    readyReplicas: count('Pods whose Ready condition is True.'),
    availableReplicas: count('Pods Ready for at least minReadySeconds.'),
    updatedReplicas: count('Pods on updateRevision, with no update in flight and every claim reporting the storage its template requests.'),
    updatedReadyReplicas: count('Pods on updateRevision that are Ready.'),
    currentRevision: z.string().optional().describe('The stable revision: every pod ran it when it was last reached.'),
    updateRevision: z.string().optional().describe('The revision of the current spec.template.'),
    collisionCount: count('Hash collisions met while naming revisions; part of the hash input.'),
    labelSelector: z.string().optional().describe('spec.selector as a string, for the scale subresource (HPA).'),
    currentImage: z.string().optional().describe("Main container image of currentRevision."),
    targetImage: z.string().optional().describe('Main container image of updateRevision.'),
    phase: Phase.optional().describe('Idle, Canary, RollingOut, Paused, Completed or Failed.'),
    currentUpdatePods: z.array(z.string()).optional().describe('Pods being updated now: an in-place update in flight, or claimed.'),
    updateClaims: z
      .array(
        z.object({
          pod: z.string().describe('The pod name.'),
          uid: z.string().describe('The pod uid.'),
          resourceVersion: z.string().describe('The pod resourceVersion the claimed write is conditional on.'),
          revision: z.string().optional().describe('The revision the claimed update moves the pod to.'),
        }),
      )
      .optional()
      .describe(
        'Updates a decision claimed before acting (SPEC 2.0): each counts as unavailable until the pod moves past the claimed resourceVersion.',
      ),
    // A hint anyone with `patch neosets/status` may write (SPEC §2.5): the CRD refuses what is not a
    // version, and a stored record that does not parse (written before the pattern) is read as none —
    // the NeoSet's own resourceVersion is then the floor (shared/k8s/resource-version.ts floorFrom).
    observedResourceVersions: z
      .object({
        pods: RecordedVersion.optional().describe("The pod list's resourceVersion."),
        controllerrevisions: RecordedVersion.optional().describe("The ControllerRevision list's resourceVersion."),
        persistentvolumeclaims: RecordedVersion.optional().describe("The PVC list's resourceVersion (read only with volumeClaimTemplates)."),
      })
      .optional()
      .catch(undefined)
      .describe(
        'The resourceVersions of the lists this status was decided from. The next decision lists the children not older than these (SPEC 2.0): it sees every pod write a claim this status no longer holds covered.',
      ),
    canary: z
      .object({
        revision: z.string().describe('The update revision the steps run for; a new one starts again at step 0.'),
        stepIndex: z.int().min(0).describe('The step running now; equal to the number of steps when all are done.'),
        stepStartedAt: z.string().describe('When the step started (RFC 3339): a timed pause ends this long after it.'),
        analysis: z
          .object({
            step: z.int().min(0).describe('The step whose end was judged.'),
            result: z.enum(['Successful', 'Failed', 'Inconclusive']).describe('Successful, Failed or Inconclusive (the query could not be evaluated).'),
            value: z.string().optional().describe('The measured value.'),
            message: z.string().describe('What was measured, against what.'),
            at: z.string().describe('When (RFC 3339).'),
          })
          .optional()
          .describe('The last analysis result.'),
        abort: z
          .object({
            reason: z.enum(['AnalysisFailed', 'Aborted']).describe('AnalysisFailed (automatic) or Aborted (by hand).'),
            message: z.string().describe('Why, with the measured value.'),
            at: z.string().describe('When (RFC 3339).'),
          })
          .optional()
          .describe('The rollout of this revision is aborted: pods return in place to currentRevision, spec untouched. `kubectl neoset rollout retry` clears it.'),
        request: z
          .string()
          .optional()
          .describe('Set by `kubectl neoset rollout promote|abort|retry` with its write, cleared by the next decision: that write is news to the reconcile function.'),
      })
      .optional()
      .describe('Where the automated canary is (SPEC 4.11).'),
    conditions: z
      .array(Condition)
      .optional()
      .meta({ description: 'Available, Progressing, Paused, ReadyForUpgrade; ClaimsResized with volumeClaimTemplates that request storage.', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }),
  })
  .describe('Observed state, written by the reconcile function.');

export const ObjectMeta = z.looseObject({
  name: z.string(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.int().optional(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

export const NeoSet = z.object({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: ObjectMeta,
  spec: NeoSetSpec,
  status: NeoSetStatus.optional(),
});

export type LabelSelector = z.infer<typeof LabelSelector>;
export type PodTemplateSpec = z.infer<typeof PodTemplateSpec>;
export type NeoSetSpec = z.infer<typeof NeoSetSpec>;
export type NeoSetSpecInput = z.input<typeof NeoSetSpec>;
export type NeoSetStatus = z.infer<typeof NeoSetStatus>;
export type NeoSet = z.infer<typeof NeoSet>;
export type Phase = z.infer<typeof Phase>;
export type Condition = z.infer<typeof Condition>;
export type ConditionType = z.infer<typeof ConditionType>;
export type UpdateStrategyType = z.infer<typeof UpdateStrategyType>;
export type Canary = z.infer<typeof Canary>;
export type CanaryStep = z.infer<typeof CanaryStep>;
export type PriorityStrategy = z.infer<typeof PriorityStrategy>;
export type PrometheusAnalysis = z.infer<typeof PrometheusAnalysis>;
export type CanaryStatus = NonNullable<NeoSetStatus['canary']>;
