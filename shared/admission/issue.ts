// A reason to refuse, as data (STYLE §3): the field path and a message that names the limit.

export interface Issue {
  /** Kubernetes field path, e.g. `spec.template.spec.containers[0].resources.limits.cpu`. */
  path: string;
  message: string;
  /** A policy limit (quota, caps) rather than an invalid value: answered 403 Forbidden, not 422 Invalid. */
  forbidden?: boolean;
}

export function issue(path: string, message: string, forbidden = false): Issue {
  return forbidden ? { path, message, forbidden } : { path, message };
}

export const renderIssue = (i: Issue): string => `${i.path}: ${i.message}`;

/** `spec.containers[0].name`, `metadata.labels[app.kubernetes.io/name]` → its keys and indexes. */
function pathSegments(path: string): (string | number)[] {
  return [...path.matchAll(/([A-Za-z_][A-Za-z0-9_]*)|\[([^\]]*)\]/g)].map(([, key, bracket]) =>
    key !== undefined ? key : /^\d+$/.test(bracket) ? Number(bracket) : bracket,
  );
}

/** The value at a field path of a JSON object; undefined where the path leads nowhere. */
export function valueAt(object: unknown, path: string): unknown {
  let at: unknown = object;
  for (const segment of pathSegments(path)) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<string | number, unknown>)[segment];
  }
  return at;
}
