// Installs CustomResourceDefinitions from YAML (knative/crd.yaml) and waits until they are served.
import { ApiextensionsV1Api, ApiException, CustomObjectsApi, loadAllYaml, type KubeConfig, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { readFile } from 'node:fs/promises';
import { poll, type PollOptions } from './wait.ts';

export const NEOSET_CRD_PATH = new URL('../../knative/crd.yaml', import.meta.url).pathname;

/** The API server's reason for refusing a request, e.g. the schema errors of a rejected CRD. */
export function apiErrorMessage(error: unknown): string {
  if (!(error instanceof ApiException)) return (error as Error).message ?? String(error);
  const body = typeof error.body === 'string' ? safeJson(error.body) : error.body;
  return `${error.code}: ${body?.message ?? error.message}`;
}

function safeJson(text: string): { message?: string } | undefined {
  try {
    return JSON.parse(text);
  } catch {
    return { message: text };
  }
}

function established(crd: V1CustomResourceDefinition): boolean {
  return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
}

/**
 * Established is not yet usable: for a moment every request on the new resource gets 429 "storage is
 * (re)initializing" while the API server fills its watch cache. Wait until a LIST of each served
 * version succeeds, so the first test does not meet that.
 */
async function waitUntilServed(kc: KubeConfig, crd: V1CustomResourceDefinition, opts: PollOptions): Promise<void> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const { group, names } = crd.spec;
  for (const { name: version } of crd.spec.versions.filter((v) => v.served)) {
    await poll(`${names.plural}.${group}/${version} to be served`, async () => {
      try {
        return await custom.listClusterCustomObject({ group, version, plural: names.plural, limit: 1 });
      } catch (error) {
        if (error instanceof ApiException && (error.code === 429 || error.code === 404)) return undefined;
        throw error;
      }
    }, opts);
  }
}

/** Creates (or replaces) every CRD in the YAML file and waits for each to be Established. */
export async function installCrds(kc: KubeConfig, path = NEOSET_CRD_PATH, opts: PollOptions = {}): Promise<string[]> {
  // loadAllYaml maps YAML keys onto client-node's typed model (x-kubernetes-*, default), which its
  // serializer needs: a plain parsed object would lose those keys on the way out.
  const crds = loadAllYaml(await readFile(path, 'utf8')) as V1CustomResourceDefinition[];
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const names: string[] = [];
  for (const body of crds) {
    const name = body.metadata?.name ?? '';
    try {
      await api.createCustomResourceDefinition({ body });
    } catch (error) {
      if (error instanceof ApiException && error.code === 409) {
        const current = await api.readCustomResourceDefinition({ name });
        body.metadata = { ...body.metadata, resourceVersion: current.metadata?.resourceVersion };
        await api.replaceCustomResourceDefinition({ name, body }).catch((replaceError: unknown) => {
          throw new Error(`CRD ${name} from ${path} rejected by the API server: ${apiErrorMessage(replaceError)}`);
        });
      } else {
        throw new Error(`CRD ${name} from ${path} rejected by the API server: ${apiErrorMessage(error)}`);
      }
    }
    await poll(`CRD ${name} to be Established`, async () => {
      const crd = await api.readCustomResourceDefinition({ name });
      const accepted = crd.status?.conditions?.find((c) => c.type === 'NamesAccepted');
      if (accepted?.status === 'False') throw new Error(`CRD ${name}: names not accepted: ${accepted.message}`);
      return established(crd) ? crd : undefined;
    }, opts);
    await waitUntilServed(kc, body, opts);
    names.push(name);
  }
  return names;
}
