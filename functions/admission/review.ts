// admission.k8s.io/v1 AdmissionReview at the boundary (STYLE §3): parsed with zod so a failure names
// the field path. Two levels of failure: a body that is not an AdmissionReview with a request uid
// cannot be answered as one (400); an AdmissionReview whose request we cannot judge is answered
// allowed=false with the reason (the API server then refuses the write, as failurePolicy Fail would).
import { z } from 'zod';
import { fieldPath } from '../../shared/core/field-path.ts';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

/** Enough to answer: an AdmissionReview with a request uid. */
export const ReviewEnvelope = z.object({
  apiVersion: z.literal(ADMISSION_API_VERSION),
  kind: z.literal('AdmissionReview'),
  request: z.looseObject({ uid: z.string().min(1).max(256) }),
});

const GroupVersionKind = z.object({ group: z.string(), version: z.string(), kind: z.string() });
const GroupVersionResource = z.object({ group: z.string(), version: z.string(), resource: z.string() });

/** The part of an AdmissionRequest we judge (everything else, e.g. userInfo, is ignored). */
export const AdmissionRequest = z.looseObject({
  uid: z.string(),
  kind: GroupVersionKind,
  resource: GroupVersionResource,
  subResource: z.string().optional(),
  name: z.string().optional(),
  namespace: z.string().optional(),
  operation: z.enum(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']),
  object: z.unknown().optional(),
  oldObject: z.unknown().optional(),
  dryRun: z.boolean().optional(),
});
export type AdmissionRequest = z.infer<typeof AdmissionRequest>;

/** The object of a review of the scale subresource (autoscaling/v1 Scale). */
export const Scale = z.looseObject({ spec: z.looseObject({ replicas: z.int().min(0).optional() }).optional() });

/** zod issues as `field.path: message`, at most `max` of them. */
export function describeIssues(error: z.ZodError, prefix: readonly PropertyKey[] = [], max = 10): string {
  const shown = error.issues.slice(0, max).map((i) => `${fieldPath([...prefix, ...i.path])}: ${i.message}`);
  const more = error.issues.length > max ? `; and ${error.issues.length - max} more` : '';
  return `${shown.join('; ')}${more}`;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code: number; reason: string; message: string };
  patchType?: 'JSONPatch';
  /** base64 of the JSONPatch document. */
  patch?: string;
  warnings?: string[];
}

export function reviewResponse(response: AdmissionResponse) {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}

/** kube-apiserver keeps warnings short; we also drop newlines and cap each one (and their number). */
export function cleanWarnings(warnings: string[]): string[] | undefined {
  const clean = warnings.slice(0, 20).map((w) => (w.length > 250 ? `${w.slice(0, 249)}…` : w).replace(/[\r\n]+/g, ' '));
  return clean.length > 0 ? clean : undefined;
}
