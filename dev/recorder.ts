// Record & replay (issue #5 §4): every event the bridge delivers, saved in the two encodings a
// function accepts (SPEC §2.1), so that one `curl` replays it:
//   NNNN-<kind>-<name>-<verb>.json        structured mode: curl -H 'content-type: application/cloudevents+json' --data-binary @file
//   NNNN-<kind>-<name>-<verb>.headers     binary mode:     curl -H @file.headers --data-binary @file.data.json
//   NNNN-<kind>-<name>-<verb>.data.json   (the body byte for byte, as the bridge sends it)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { goJson } from './bridge/go-json.ts';
import { toBinaryRequest, type PumpEvent } from './bridge/pump.ts';

/** The binary-mode HTTP headers of an event, exactly as the bridge sends them. */
export function binaryHeaders(event: PumpEvent): [string, string][] {
  return [...toBinaryRequest('http://replay/', event).headers.entries()];
}

/** A short file name: sequence, then kind, object name and verb (`0007-neoset-mysql-add`), or `resync`. */
export function eventFileBase(seq: number, event: PumpEvent): string {
  const n = String(seq).padStart(4, '0');
  if (!event.name) return `${n}-resync`;
  const verb = event.type.split('.').pop();
  return `${n}-${(event.kind ?? 'object').toLowerCase()}-${event.name.replace(/[^a-zA-Z0-9.-]+/g, '_')}-${verb}`;
}

export interface Recorder {
  dir: string;
  /** How many events have been saved. */
  count(): number;
  record(event: PumpEvent): void;
}

export function createRecorder(dir: string): Recorder {
  mkdirSync(dir, { recursive: true });
  let seq = 0;
  return {
    dir,
    count: () => seq,
    record(event) {
      const base = join(dir, eventFileBase(++seq, event));
      writeFileSync(`${base}.json`, `${JSON.stringify(event, null, 2)}\n`);
      writeFileSync(`${base}.headers`, binaryHeaders(event).map(([k, v]) => `${k}: ${v}\n`).join(''));
      writeFileSync(`${base}.data.json`, goJson(event.data));
    },
  };
}
