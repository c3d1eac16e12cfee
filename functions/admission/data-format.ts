// What the pods of a NeoSet ran, read from the API server for the data-format rule (SPEC §4.7;
// shared/admission/data-format.ts): its pods (name and revision) and its ControllerRevisions (the
// format each template declares), each kept only if the NeoSet controls it or would adopt it.
import type { Logger } from 'pino';
import type { NeoSet } from '../../shared/api/neoset.ts';
import { ACK_PATH, FORMAT_PATH, judgeDataFormat, type DataFormatVerdict } from '../../shared/admission/data-format.ts';
import { issue } from '../../shared/admission/issue.ts';
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
        // A revision's template as the rule reads it: its data-format annotation, a short value; env values
        // and other long strings (up to a MiB each in a tenant's template) are cut before they are parsed.
        for await (const page of listPages<ControllerRevision>(client, paths.revisions(namespace), neosetSelector(neoset), signal, { longStrings: { over: 1024, standIn: () => '""' } })) {
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
export async function addDataFormatVerdict(verdict: Verdict, review: NeoSetReview, read: ReadFormatsRan, log: Logger, namespaceTold = true): Promise<string | null> {
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
  const judged = namespaceTold ? judgeDataFormat(neoset, ran) : ruleOnly(judgeDataFormat(neoset, ran), review.neoset);
  verdict.issues.push(...judged.issues);
  verdict.warnings.push(...judged.warnings);
  return null;
}

/**
 * The verdict as told to a caller admission cannot authenticate (functions/admission/app.ts `Told`):
 * the field and the rule, not the pods, revisions and formats read from the namespace it named —
 * which, without a client CA, may be any tenant's (SPEC §2.5).
 */
function ruleOnly(judged: DataFormatVerdict, neoset: NeoSet): DataFormatVerdict {
  const declared = dataFormatOf(neoset.spec.template) !== null;
  return {
    issues: judged.issues.map((i) =>
      issue(i.path, `lower than a data format this NeoSet's pods ran (an in-place rollback keeps their volumes): set ${ACK_PATH} to the downgrade "FROM->TO" to proceed (kubectl neoset rollout undo --accept-data-format-downgrade)`),
    ),
    warnings: judged.warnings.map(() => (declared ? `data format downgrade accepted (${ACK_PATH}); the pods' volumes are kept` : `${FORMAT_PATH} is not set: whether this change lowers the data format the pods ran is unknown`)),
  };
}
