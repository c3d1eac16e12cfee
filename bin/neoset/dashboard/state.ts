// The state the page draws, for one selected NeoSet (or none): every NeoSet's summary, the selected
// one's detail, the buttons, and what is wrong with the watches. Sent whole on every change — a few
// kB even for a large NeoSet, and the page needs no merging logic.
import { buttonInfo, BUTTONS } from './buttons.ts';
import type { Store } from './store.ts';
import { detail, summaries } from './view.ts';

export interface Selection {
  namespace: string;
  name: string;
}

export function pageState(store: Store, opts: { namespace?: string; readOnly: boolean }, selected: Selection | undefined) {
  const objects = { neosets: store.neosets(), pods: store.pods(), revisions: store.revisions(), events: store.events() };
  return {
    /** The namespace shown, or null for all namespaces. */
    namespace: opts.namespace ?? null,
    readOnly: opts.readOnly,
    actions: opts.readOnly ? [] : BUTTONS.map(buttonInfo),
    neosets: summaries(objects.neosets),
    selected: selected ? (detail(objects, selected.namespace, selected.name) ?? null) : null,
    problems: store.problems(),
  };
}

/** `?neoset=NAMESPACE/NAME`, as the page asks for its selection. */
export function parseSelection(param: string | undefined): Selection | undefined {
  const m = /^([a-z0-9-]+)\/([a-z0-9.-]+)$/.exec(param ?? '');
  return m ? { namespace: m[1], name: m[2] } : undefined;
}
