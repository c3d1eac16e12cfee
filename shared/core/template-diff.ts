// Can a pod move from one template to another in place (§4.4)? Only when nothing but container
// images and template metadata labels/annotations differ: those are the fields an in-place patch
// carries (a Pod's other spec fields are immutable, or need a new pod to take effect).
import type { PodTemplateSpec } from '../api/neoset.ts';
import { canonicalJson } from './json.ts';

export interface TemplateChange {
  /** Nothing differs beyond container images and template labels/annotations. */
  inPlace: boolean;
  /** The fields that differ beyond those, as paths (`spec.containers[app].env`): what InPlaceOnly names. */
  differences: string[];
}

const MAX_PATHS = 5;

/** The template with what an in-place update may change blanked out. */
function immutablePart(template: PodTemplateSpec): unknown {
  const { labels: _l, annotations: _a, ...metadata } = template.metadata ?? {};
  const containers = template.spec.containers.map((c) => ({ ...c, image: '' }));
  return { metadata, spec: { ...template.spec, containers } };
}

export function templateChange(from: PodTemplateSpec, to: PodTemplateSpec): TemplateChange {
  const a = immutablePart(from);
  const b = immutablePart(to);
  if (canonicalJson(a) === canonicalJson(b)) return { inPlace: true, differences: [] };
  const differences: string[] = [];
  diffPaths(a, b, '', differences);
  return { inPlace: false, differences };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function diffPaths(a: unknown, b: unknown, path: string, out: string[]): void {
  if (out.length >= MAX_PATHS || canonicalJson(a) === canonicalJson(b)) return;
  if (isObject(a) && isObject(b)) {
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      diffPaths(a[key], b[key], path ? `${path}.${key}` : key, out);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((item, i) => {
      const name = isObject(item) && typeof item.name === 'string' ? item.name : String(i);
      diffPaths(item, b[i], `${path}[${name}]`, out);
    });
    return;
  }
  out.push(path || '(template)');
}
