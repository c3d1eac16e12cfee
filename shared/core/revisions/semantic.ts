// The canonical form of a pod template (SPEC §4.2 [v0.3]): what names a revision and decides whether
// two templates are the same one. Kubernetes 1.33 → 1.34 restarted StatefulSets whose template had
// not changed, because the API server began to store a defaulted field the hash then covered
// (kubernetes/kubernetes#134773). Here a field the API server would default, spelled with its
// default, is one form with the field left out: a template read back from a Pod or `kubectl get -o
// yaml` (terminationMessagePath, imagePullPolicy, probe periods, `creationTimestamp: null`), or one a
// mutating webhook filled, is the template without them.
//
// Defaults are applied by eliding them, not by filling them in: every template the previous release
// hashed spelled (almost always) no defaults, so its hash is unchanged — filling would rename every
// revision ever made, which is #134773 itself. Only defaults kube-apiserver's SetDefaults_* write
// (k8s.io/kubernetes pkg/apis/core/v1/defaults.go, Kubernetes 1.37) are elided, each at its own
// path; nothing else is touched, so two templates that differ in anything a pod runs differently with
// stay different.
import type { PodTemplateSpec } from '../../api/neoset.ts';
import { canonicalJson, isPlainObject, type JsonObject } from '../json.ts';

type Defaults = Record<string, unknown>;

const POD_SPEC: Defaults = {
  restartPolicy: 'Always',
  terminationGracePeriodSeconds: 30,
  dnsPolicy: 'ClusterFirst',
  schedulerName: 'default-scheduler',
  enableServiceLinks: true,
};
const CONTAINER: Defaults = { terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' };
const PROBE: Defaults = { timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 };
const PROBES = ['livenessProbe', 'readinessProbe', 'startupProbe'] as const;
/** Volume sources whose defaultMode the API server sets to 0644. */
const MODE_VOLUMES = ['configMap', 'secret', 'projected', 'downwardAPI'] as const;
const DEFAULT_MODE = 0o644;

/** The key/value pairs of `object` that are not its defaults; an object that was none is returned as it was. */
function elide(object: unknown, defaults: Defaults): unknown {
  if (!isPlainObject(object)) return object;
  return Object.fromEntries(Object.entries(object).filter(([k, v]) => !(k in defaults && v === defaults[k])));
}

const isEmptyObject = (v: unknown) => isPlainObject(v) && Object.keys(v).length === 0;

/** Without the keys whose value is `{}`: an empty securityContext or resources is the field left out. */
function withoutEmpty(object: JsonObject, keys: string[]): JsonObject {
  return Object.fromEntries(Object.entries(object).filter(([k, v]) => !(keys.includes(k) && isEmptyObject(v))));
}

/**
 * The pull policy kube-apiserver gives a container without one: Always for a `:latest` or untagged
 * image (no digest), else IfNotPresent.
 */
export function defaultPullPolicy(image: unknown): string {
  if (typeof image !== 'string') return 'IfNotPresent';
  if (image.includes('@')) return 'IfNotPresent';
  const slash = image.lastIndexOf('/');
  const colon = image.lastIndexOf(':');
  const tag = colon > slash ? image.slice(colon + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function probe(p: unknown): unknown {
  const out = elide(p, PROBE);
  if (!isPlainObject(out) || !isPlainObject(out.httpGet)) return out;
  return { ...out, httpGet: elide(out.httpGet, { scheme: 'HTTP', path: '/' }) };
}

function container(c: unknown): unknown {
  if (!isPlainObject(c)) return c;
  let out = elide(c, { ...CONTAINER, imagePullPolicy: defaultPullPolicy(c.image) }) as JsonObject;
  out = withoutEmpty(out, ['resources', 'securityContext']);
  for (const name of PROBES) if (name in out) out[name] = probe(out[name]);
  if (Array.isArray(out.ports)) out.ports = out.ports.map((port) => elide(port, { protocol: 'TCP' }));
  if (Array.isArray(out.env)) {
    out.env = out.env.map((e) => {
      if (!isPlainObject(e) || !isPlainObject(e.valueFrom) || !isPlainObject(e.valueFrom.fieldRef)) return e;
      return { ...e, valueFrom: { ...e.valueFrom, fieldRef: elide(e.valueFrom.fieldRef, { apiVersion: 'v1' }) } };
    });
  }
  return out;
}

function volume(v: unknown): unknown {
  if (!isPlainObject(v)) return v;
  const out: JsonObject = { ...v };
  for (const source of MODE_VOLUMES) if (source in out) out[source] = elide(out[source], { defaultMode: DEFAULT_MODE });
  return out;
}

function podSpec(spec: unknown): unknown {
  if (!isPlainObject(spec)) return spec;
  const out = withoutEmpty(elide(spec, POD_SPEC) as JsonObject, ['securityContext']);
  for (const list of ['containers', 'initContainers'] as const) if (Array.isArray(out[list])) out[list] = out[list].map(container);
  if (Array.isArray(out.volumes)) out.volumes = out.volumes.map(volume);
  return out;
}

/** The template in its canonical form (a new object; the input is not changed). */
export function canonicalTemplate(template: PodTemplateSpec | unknown): unknown {
  if (!isPlainObject(template)) return template;
  const out: JsonObject = { ...template };
  // `creationTimestamp: null` is how client-go serializes an unset time in an embedded ObjectMeta.
  if (isPlainObject(out.metadata)) {
    const { creationTimestamp, ...metadata } = out.metadata;
    out.metadata = creationTimestamp === null ? metadata : out.metadata;
  }
  if ('spec' in out) out.spec = podSpec(out.spec);
  return out;
}

/** One spelling per template, whatever its key order and whichever defaults it spells out. */
export const canonicalTemplateJson = (template: unknown): string => canonicalJson(canonicalTemplate(template));

/** Two templates a pod runs the same from (SPEC §4.2 "compared semantically"). */
export const sameTemplate = (a: unknown, b: unknown): boolean => canonicalTemplateJson(a) === canonicalTemplateJson(b);
