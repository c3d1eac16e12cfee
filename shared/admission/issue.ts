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

export const sameIssue = (a: Issue, b: Issue): boolean => a.path === b.path && a.message === b.message;
