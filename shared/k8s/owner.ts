// The NeoSet a plan's writes are for: Events are recorded on it, metrics labelled with it.
import type { ObjectMeta } from '../core/objects.ts';

/** The NeoSet the writes are for: Events are recorded on it, metrics labelled with it. */
export interface Owner {
  name: string;
  namespace: string;
  uid: string;
}

export const ownerOf = (neoset: { metadata: ObjectMeta }): Owner => ({
  name: neoset.metadata.name,
  namespace: neoset.metadata.namespace ?? 'default',
  uid: neoset.metadata.uid ?? '',
});
