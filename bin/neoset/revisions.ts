// How the plugin prints a revision's pod template (rollout history, undo, the dashboard). What undo
// goes back to and the patch it writes are the core's (shared/core/revisions/rollback.ts, SPEC §4.7).
import type { PodTemplateSpec } from '../../shared/api/neoset.ts';

/** name=image for every container, as `kubectl set image` spells them. */
export function imagesOf(template: PodTemplateSpec): string {
  return template.spec.containers.map((c) => `${c.name}=${c.image}`).join(',');
}
