// What the pods of a NeoSet ran, read from the API server for the data-format rule (SPEC §4.7;
// shared/admission/data-format.ts): its pods (name and revision) and its ControllerRevisions (the
// format each template declares), each kept only if the NeoSet controls it or would adopt it.
import type { Logger } from 'pino';
import type { NeoSet } from '../../shared/api/neoset.ts';
import { FORMAT_PATH, judgeDataFormat } from '../../shared/admission/data-format.ts';
import { transientReason } from '../../shared/admission/dry-run-refusal.ts';
import type { NeoSetReview, Verdict } from '../../shared/admission/judge.ts';
import { sameJson } from '../../shared/core/json.ts';
import { dataFormatOf, formatsRan, revisionFormat, type FormatRan, type RevisionFormat } from '../../shared/core/revisions/data-format.ts';
import { controlOf } from '../../shared/core/ownership.ts';
import type { ControllerRevision } from '../../shared/core/objects.ts';
import { ApiError, type KubeClient } from '../../shared/k8s/client.ts';
import { paths } from '../../shared/k8s/paths.ts';
import { listPages, listPodsOnRevisions, neosetSelector } from '../../shared/k8s/pods-on-revisions.ts';

/** `signal` ends the reads (their HTTP requests are aborted with it). */
export type ReadFormatsRan = (neoset: NeoSet, namespace: string, signal: AbortSignal) => Promise<FormatRan[]>;

/**
 * Below the webhook's timeoutSeconds (10) with the dry-run's 5 s after it: two lists (a few pages for
 * a large NeoSet), tens of milliseconds on a healthy API server.
 */
export const READ_FORMATS_TIMEOUT_MS = 3000;

/** readFormatsRan through the API (KUBECONFIG or the in-cluster service account: list pods, list controllerrevisions). */
export function apiReadFormatsRan(client: KubeClient): ReadFormatsRan {
  return async (neoset, namespace, signal) => {
    const [pods, revisions] = await Promise.all([
      listPodsOnRevisions(client, neoset, namespace, signal),
      (async () => {
        const formats: RevisionFormat[] = [];
        for await (const page of listPages<ControllerRevision>(client, paths.revisions(namespace), neosetSelector(neoset), signal)) {
          for (const r of page) if (controlOf(neoset, r) !== 'other') formats.push(revisionFormat(r));
        }
        return formats;
      })(),
    ]);
    return formatsRan({ pods, revisions, currentRevision: neoset.status?.currentRevision, updateRevision: neoset.status?.updateRevision });
  };
}

/** Only a write that sets a template can run a new format: CREATE (it may adopt orphans), or an UPDATE of the template. */
const setsTemplate = (review: NeoSetReview) => review.old === null || !sameJson(review.old.spec.template, review.neoset.spec.template);

/**
 * Adds the data-format rule's issues and warnings to the verdict. Returns why it could not be judged
 * now when the pods and revisions could not be read and the template declares a format: the write is
 * then refused (503, retry), as the dry-run's own failures are. Failing open would let exactly the
 * rollback this rule exists for through whenever the API server is slow, and with failurePolicy Fail
 * the user sees the same kind of refusal when admission itself is down; a template that declares no
 * format could not be refused anyway, so it gets a warning and passes.
 */
export async function addDataFormatVerdict(verdict: Verdict, review: NeoSetReview, read: ReadFormatsRan, log: Logger): Promise<string | null> {
  if (verdict.issues.length > 0 || !setsTemplate(review)) return null;
  // The stored object's status on UPDATE: what reconcile last wrote (the API server keeps it on a spec write anyway).
  const neoset = review.old ? { ...review.neoset, status: review.old.status } : review.neoset;
  let ran: FormatRan[];
  try {
    ran = await read(neoset, review.namespace, AbortSignal.timeout(READ_FORMATS_TIMEOUT_MS));
  } catch (err) {
    const forbidden = err instanceof ApiError && err.status === 403 ? ': admission may not list pods or controllerrevisions' : '';
    const why = `${transientReason(err instanceof ApiError ? err : null)}${forbidden}`;
    log.warn({ namespace: review.namespace, name: review.neoset.metadata.name, err: (err as Error)?.message }, 'data formats not read');
    if (dataFormatOf(review.neoset.spec.template) === null) {
      verdict.warnings.push(`${FORMAT_PATH}: which data formats the pods ran was not checked (${why})`);
      return null;
    }
    return `${FORMAT_PATH}: cannot check which data formats the pods ran now (${why}); retry`;
  }
  const judged = judgeDataFormat(neoset, ran);
  verdict.issues.push(...judged.issues);
  verdict.warnings.push(...judged.warnings);
  return null;
}
