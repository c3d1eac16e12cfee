// The string form of a label selector (`?labelSelector=` — k8s.io/apimachinery/pkg/labels.Parse),
// read into a metav1.LabelSelector so that matching is the one the core uses.
import type { LabelSelector } from '../../shared/api/neoset.ts';
import { selects } from '../../shared/core/selector.ts';
import { badRequest } from './errors.ts';

type Requirement = NonNullable<LabelSelector['matchExpressions']>[number];

/** Splits on the commas that separate requirements (not those inside `in (a,b)`). */
function requirements(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
    else if (text[i] === ',' && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out.map((r) => r.trim()).filter((r) => r !== '');
}

const SET = /^([^\s!=(),]+)\s+(in|notin)\s*\(([^()]*)\)$/;
const EQUALITY = /^([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/;
const EXISTS = /^(!?)\s*([^\s!=(),]+)$/;

function requirement(text: string): Requirement {
  let m = SET.exec(text);
  if (m) {
    const values = m[3].split(',').map((v) => v.trim());
    return { key: m[1], operator: m[2] === 'in' ? 'In' : 'NotIn', values };
  }
  m = EQUALITY.exec(text);
  if (m) return { key: m[1], operator: m[2] === '!=' ? 'NotIn' : 'In', values: [m[3]] };
  m = EXISTS.exec(text);
  if (m) return { key: m[2], operator: m[1] ? 'DoesNotExist' : 'Exists' };
  throw badRequest(`unable to parse requirement: ${JSON.stringify(text)}`);
}

export function parseLabelSelector(text: string): LabelSelector {
  return { matchExpressions: requirements(text).map(requirement) };
}

/** A matcher for a `labelSelector` query value; no value selects everything. */
export function labelMatcher(text: string | undefined): (labels: Record<string, string> | undefined) => boolean {
  if (!text) return () => true;
  const selector = parseLabelSelector(text);
  return (labels) => selects(selector, labels);
}
