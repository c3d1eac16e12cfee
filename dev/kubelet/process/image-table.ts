// The image table of process mode: which image references this machine can run as real processes,
// and how — the part of an OCI image config that matters without a root filesystem (entrypoint,
// cmd, working directory, env). Images not in the table keep the simulated kubelet's behaviour.
//
// A user adds entries with a JSON file named by NEOSET_IMAGE_TABLE (or the kubelet's imageTable
// option), a list of { image, entrypoint?, cmd?, workingDir?, env? }. `image` matches the reference
// as written or as normalized (docker.io/library/…:latest), `*` standing for any run of characters.
// In entrypoint, cmd, workingDir and env values, `{checkout}` is this repository and `{node}` its
// Node 24; entrypoint and cmd may also name the container's env as $(VAR), like a pod's command.
// A default entry may name a program built for the stack as {program:NAME} in its entrypoint (e.g.
// CoreDNS's binary, dev/cluster/build-coredns.sh): it is in the table only when the kubelet is given
// that program (ProcessModeOptions.programs), so without it such images stay simulated.
// The default entries, and the stack's (Knative's, dev/cluster/knative.ts), are `fixedCommand`: the
// image runs the table's program, never a pod's `command` (process-mode pods run as root).

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { KNATIVE_SERVING_COMMANDS } from '../../cluster/binaries.ts';
import { normalizeImage } from '../image.ts';

const entrySchema = z
  .object({
    image: z.string().min(1).max(512),
    entrypoint: z.array(z.string().max(4096)).max(256).default([]),
    cmd: z.array(z.string().max(4096)).max(256).default([]),
    workingDir: z.string().max(4096).optional(),
    env: z.record(z.string().max(256), z.string().max(65536)).default({}),
    // The image runs its own program only (environment.ts commandLine): a pod's `command` is refused,
    // and so is what would make the program run other code (NODE_OPTIONS, LD_PRELOAD, a $(VAR) of
    // the entrypoint naming a path). Its processes run as root on this host; whoever may create a
    // pod in the dev cluster must not get a root shell on it by naming the stack's own images.
    fixedCommand: z.boolean().default(false),
    // With fixedCommand: a pod's `args` are refused too — for a program whose flags choose what it
    // loads (Traefik: plugins, files, providers), the table's flags are its whole configuration.
    fixedArgs: z.boolean().optional(),
  })
  .strict();
export type ImageTableEntry = z.input<typeof entrySchema>;
export type ImageEntry = z.output<typeof entrySchema>;

export const CHECKOUT = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '');

/** This repository's Node 24: the one running us when it is a 24, else the npm package node@24 of the checkout. */
export function node24(): string {
  return Number(process.versions.node.split('.')[0]) >= 24 ? process.execPath : `${CHECKOUT}/node_modules/node/bin/node`;
}

/** NeoSet's own image runs its functions from the checkout (the image's main.mjs picks one by NEOSET_FUNCTION too). */
export const DEFAULT_IMAGE_TABLE: ImageTableEntry[] = [
  {
    image: 'ghcr.io/neoset/neoset:*',
    entrypoint: ['{node}', '--enable-source-maps', 'functions/$(NEOSET_FUNCTION)/server.ts'],
    workingDir: '{checkout}',
    env: { NODE_ENV: 'production', PORT: '8080' },
    fixedCommand: true,
  },
  // The cluster DNS (dev/cluster/coredns.ts), whatever tag the Deployment names: our build runs it,
  // with the checkout's Corefile. No args: `-conf` would name a Corefile of the pod's choosing (its
  // plugins read host files: hosts, the kubernetes plugin's kubeconfig and tls) and `-pidfile` a file
  // to write, as root on this host.
  { image: 'registry.k8s.io/coredns/coredns:*', entrypoint: ['{program:coredns}', '-conf', '{checkout}/dev/cluster/Corefile'], fixedCommand: true, fixedArgs: true },
  // Knative Serving's components (dev/cluster/serving.ts rewrites the release's ko:// references to
  // these images), each its binary given as the program knative-serving-<cmd> (servingPrograms).
  // queue is the queue-proxy Serving's controller puts beside every revision's container. No args:
  // the release passes none, and their --kubeconfig would let a pod run them as this host's admin.
  ...KNATIVE_SERVING_COMMANDS.map((cmd) => ({
    image: `neoset.local/knative-serving/${cmd}:*`,
    entrypoint: [`{program:knative-serving-${cmd}}`],
    fixedCommand: true,
    fixedArgs: true,
  })),
  // Traefik, Serving's KIngress implementation (dev/cluster/traefik.ts): its static configuration is
  // the checkout's file, named by the one flag it gets. A configuration file Traefik finds wins over
  // flags and TRAEFIK_* variables (its FileLoader runs first), and it looks in the working directory
  // and /etc/traefik, where a pod could mount one: --configFile names ours, so none is looked for.
  {
    image: 'neoset.local/traefik:*',
    entrypoint: ['{program:traefik}', '--configFile={checkout}/dev/cluster/traefik.yaml'],
    workingDir: '{checkout}/dev/cluster',
    fixedCommand: true,
    fixedArgs: true,
  },
];

export interface ImageTable {
  /** The entry that runs `reference`, with {checkout} and {node} filled in; undefined when it is not in the table. */
  lookup(reference: string): ImageEntry | undefined;
}

/**
 * The table: `extra` entries and NEOSET_IMAGE_TABLE's file first (a user's entry wins), then the
 * defaults; `programs` fills {program:NAME} (an entry naming a program not given is left out).
 */
export function createImageTable(extra: ImageTableEntry[] = [], env: NodeJS.ProcessEnv = process.env, programs: Record<string, string> = {}): ImageTable {
  const fromFile = env.NEOSET_IMAGE_TABLE ? readTableFile(env.NEOSET_IMAGE_TABLE) : [];
  const entries = z
    .array(entrySchema)
    .parse([...extra, ...fromFile, ...DEFAULT_IMAGE_TABLE])
    .flatMap((entry) => withPrograms(entry, programs))
    .map(fill);
  // Both sides as written and normalized: `nginx:1.*` matches `docker.io/library/nginx:1.27` too.
  const patterns = entries.map((entry) => ({ entry, patterns: [globPattern(entry.image), globPattern(normalizeImage(entry.image))] }));
  return {
    lookup(reference) {
      const candidates = [reference, normalizeImage(reference)];
      return patterns.find(({ patterns }) => patterns.some((p) => candidates.some((c) => p.test(c))))?.entry;
    },
  };
}

function readTableFile(path: string): unknown[] {
  const parsed = z.array(z.unknown()).max(1000).safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success) throw new Error(`NEOSET_IMAGE_TABLE=${path}: expected a JSON list of entries`);
  return parsed.data;
}

function globPattern(glob: string): RegExp {
  return new RegExp(`^${glob.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
}

const PROGRAM = /\{program:([a-z0-9-]+)\}/g;

/** The entry with {program:NAME} filled in its entrypoint and cmd, or none when a program is not given. */
function withPrograms(entry: ImageEntry, programs: Record<string, string>): ImageEntry[] {
  const names = [...entry.entrypoint, ...entry.cmd].flatMap((s) => [...s.matchAll(PROGRAM)].map((m) => m[1]));
  if (names.some((name) => !Object.hasOwn(programs, name))) return [];
  const sub = (s: string) => s.replace(PROGRAM, (_match, name: string) => programs[name]);
  return [{ ...entry, entrypoint: entry.entrypoint.map(sub), cmd: entry.cmd.map(sub) }];
}

function fill(entry: ImageEntry): ImageEntry {
  const sub = (s: string) => s.replaceAll('{checkout}', CHECKOUT).replaceAll('{node}', node24());
  return {
    ...entry,
    entrypoint: entry.entrypoint.map(sub),
    cmd: entry.cmd.map(sub),
    workingDir: entry.workingDir === undefined ? undefined : sub(entry.workingDir),
    env: Object.fromEntries(Object.entries(entry.env).map(([k, v]) => [k, sub(v)])),
  };
}
