// How `rollout status` shows progress. On a terminal: a few lines (phase, updated, ready, pods being
// updated, kubectl's status line) rewritten in place with node:readline's cursor moves — no library
// needed for that. Elsewhere (a pipe, a CI log): one plain line each time the status line changes,
// exactly as kubectl rollout status prints.
import { clearScreenDown, cursorTo, moveCursor } from 'node:readline';
import type { NeoSet } from '../../shared/api/neoset.ts';
import { ref } from './neosets.ts';
import { priorityText, scaleBudgetText } from './peers-text.ts';
import type { RolloutStatus } from './rollout-status.ts';

const bar = (n: number, of: number, width = 20) => {
  const full = of > 0 ? Math.round((Math.min(n, of) / of) * width) : width;
  return `[${'#'.repeat(full)}${'-'.repeat(width - full)}]`;
};

export function progressLines(neoset: NeoSet, s: RolloutStatus): string[] {
  const { spec, status = {} } = neoset;
  const replicas = spec.replicas;
  const updated = status.updatedReplicas ?? 0;
  const ready = status.readyReplicas ?? 0;
  const images = status.currentImage === status.targetImage ? status.targetImage : `${status.currentImage} -> ${status.targetImage}`;
  const { partition, pause } = spec.updateStrategy;
  // §4.12: the order a priorityStrategy sets, and the scale budget, beside what they bound.
  const [priority, budget] = [priorityText(spec.updateStrategy.priorityStrategy), scaleBudgetText(spec)];
  return [
    `${ref(neoset.metadata.name)}  phase ${status.phase ?? 'unknown'}${pause ? ' (pause: true)' : ''}  ${images ?? ''}`,
    `  updated   ${bar(updated, replicas)} ${updated}/${replicas}${partition > 0 ? `  (partition ${partition}: ${Math.max(0, replicas - partition)} to update)` : ''}${priority ? `  (${priority})` : ''}`,
    `  ready     ${bar(ready, replicas)} ${ready}/${replicas}${budget ? `  (${budget})` : ''}`,
    `  updating  ${status.currentUpdatePods?.length ? status.currentUpdatePods.join(', ') : '-'}`,
    s.message,
  ];
}

export interface Progress {
  show(neoset: NeoSet, s: RolloutStatus): void;
}

export function terminalProgress(out: NodeJS.WriteStream): Progress {
  let rows = 0;
  return {
    show(neoset, s) {
      if (rows > 0) {
        moveCursor(out, 0, -rows);
        cursorTo(out, 0);
        clearScreenDown(out);
      }
      const lines = progressLines(neoset, s);
      out.write(`${lines.join('\n')}\n`);
      // A line wider than the terminal wraps onto more rows, all of which the next redraw moves back
      // over. A terminal of unknown width (0 columns, as under `script`) is taken not to wrap.
      const width = out.columns || Infinity;
      rows = lines.reduce((n, l) => n + Math.max(1, Math.ceil(l.length / width)), 0);
    },
  };
}

export function plainProgress(out: NodeJS.WritableStream): Progress {
  let last = '';
  return {
    show(_neoset, s) {
      if (s.message === last) return;
      last = s.message;
      out.write(`${s.message}\n`);
    },
  };
}
