// The dashboard's write buttons: each one is a rollout command of the CLI (commands/*.ts), run with
// the same conditional write and returning the same message. The page draws its buttons from this
// table, so a new command (abort and retry, SPEC §4.11) is one entry here and nothing in the page.
import { z } from 'zod';
import type { Cluster } from '../cluster.ts';
import { setPause } from '../commands/pause.ts';
import { canary } from '../commands/canary.ts';
import { promote } from '../commands/promote.ts';
import { undo } from '../commands/undo.ts';

/** The body of a button's POST: only undo takes anything (the revision; none means the previous one). */
export const ButtonInput = z.strictObject({ revision: z.int().min(1).optional() });
export type ButtonInput = z.infer<typeof ButtonInput>;

/** A button: a CLI rollout command the page may run (not a plan Action of the core). */
export interface Button {
  id: string;
  label: string;
  /** The CLI command it is, shown in the confirmation. */
  command: string;
  /** What it will do, asked before it is done. */
  confirm: string;
  /** The confirmation asks for a revision (undo). */
  takesRevision?: true;
  run(cluster: Cluster, name: string, input: ButtonInput): Promise<string>;
}

export const BUTTONS: Button[] = [
  {
    id: 'promote',
    label: 'Promote',
    command: 'rollout promote',
    confirm: 'Take the next canary step: lower the partition by one batch (maxUnavailable pods) and clear pause.',
    run: (cluster, name) => promote(cluster, name, false),
  },
  {
    id: 'promote-full',
    label: 'Promote --full',
    command: 'rollout promote --full',
    confirm: 'Set the partition to 0 and clear pause: the whole NeoSet is updated.',
    run: (cluster, name) => promote(cluster, name, true),
  },
  {
    id: 'pause',
    label: 'Pause',
    command: 'rollout pause',
    confirm: 'Set spec.updateStrategy.pause: no new pod update starts (updates in flight finish).',
    run: (cluster, name) => setPause(cluster, name, true),
  },
  {
    id: 'resume',
    label: 'Resume',
    command: 'rollout resume',
    confirm: 'Clear spec.updateStrategy.pause: the rollout goes on.',
    run: (cluster, name) => setPause(cluster, name, false),
  },
  {
    id: 'abort',
    label: 'Abort',
    command: 'rollout abort',
    confirm: 'Abort the canary: every pod returns in place to the current revision; spec stays as written (phase Failed, reason Aborted).',
    run: (cluster, name) => canary(cluster, name, 'abort'),
  },
  {
    id: 'retry',
    label: 'Retry',
    command: 'rollout retry',
    confirm: 'Start the canary steps of an aborted rollout again, at step 1.',
    run: (cluster, name) => canary(cluster, name, 'retry'),
  },
  {
    id: 'undo',
    label: 'Undo…',
    command: 'rollout undo',
    confirm: "Write the chosen revision's pod template into spec.template: the pods go back to it in place.",
    takesRevision: true,
    run: (cluster, name, input) => undo(cluster, name, input.revision),
  },
];

/** What the page needs to draw a button and its confirmation. */
export const buttonInfo = ({ id, label, command, confirm, takesRevision }: Button) => ({ id, label, command, confirm, takesRevision: takesRevision ?? false });
