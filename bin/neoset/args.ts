// The command line, parsed and validated at the edge (STYLE §3): everything after this file is a
// typed Invocation. Node's util.parseArgs does the tokenizing — a maintained part of the runtime,
// no dependency to install, and enough for kubectl-style `--flag=value` / `-n value` flags.
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { parseDuration } from '../../shared/core/duration.ts';
import { CliError, usageError } from './errors.ts';

export interface ClusterFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

/** NeoSet's functions, as `version --function-url NAME=URL` names them. */
export const FUNCTION_NAMES = ['reconcile', 'readiness', 'admission'] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];

export type Command =
  | { name: 'get'; neoset?: string }
  | { name: 'status'; neoset: string; watch: boolean; timeoutMs: number }
  | { name: 'history'; neoset: string; revision?: number }
  | { name: 'undo'; neoset: string; toRevision?: number; dryRun: boolean; acceptDataFormatDowngrade: boolean }
  | { name: 'pause'; neoset: string }
  | { name: 'resume'; neoset: string }
  | { name: 'promote'; neoset: string; full: boolean }
  | { name: 'abort'; neoset: string }
  | { name: 'retry'; neoset: string }
  | { name: 'dashboard'; port: number; address: string; allNamespaces: boolean; readOnly: boolean }
  | { name: 'version'; client: boolean; functionUrls: Partial<Record<FunctionName, string>> };

export type Invocation = { kind: 'help'; topic: string } | { kind: 'run'; topic: string; cluster: ClusterFlags; command: Command };

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  watch: { type: 'boolean', short: 'w' },
  timeout: { type: 'string' },
  revision: { type: 'string' },
  'to-revision': { type: 'string' },
  full: { type: 'boolean' },
  port: { type: 'string' },
  address: { type: 'string' },
  'all-namespaces': { type: 'boolean', short: 'A' },
  'read-only': { type: 'boolean' },
  client: { type: 'boolean' },
  'function-url': { type: 'string', multiple: true },
  'dry-run': { type: 'boolean' },
  'accept-data-format-downgrade': { type: 'boolean' },
} as const;
type Flag = keyof typeof OPTIONS;
const GLOBAL_FLAGS: Flag[] = ['help', 'kubeconfig', 'context', 'namespace'];

/** Every command: its words, whether NAME is required (or not taken), and the flags it takes besides the global ones. */
export const COMMANDS: Record<string, { name: Command['name']; nameRequired: boolean; noName?: true; flags: Flag[] }> = {
  get: { name: 'get', nameRequired: false, flags: [] },
  'rollout status': { name: 'status', nameRequired: true, flags: ['watch', 'timeout'] },
  'rollout history': { name: 'history', nameRequired: true, flags: ['revision'] },
  'rollout undo': { name: 'undo', nameRequired: true, flags: ['to-revision', 'dry-run', 'accept-data-format-downgrade'] },
  'rollout pause': { name: 'pause', nameRequired: true, flags: [] },
  'rollout resume': { name: 'resume', nameRequired: true, flags: [] },
  'rollout promote': { name: 'promote', nameRequired: true, flags: ['full'] },
  'rollout abort': { name: 'abort', nameRequired: true, flags: [] },
  'rollout retry': { name: 'retry', nameRequired: true, flags: [] },
  dashboard: { name: 'dashboard', nameRequired: false, noName: true, flags: ['port', 'address', 'all-namespaces', 'read-only'] },
  version: { name: 'version', nameRequired: false, noName: true, flags: ['client', 'function-url'] },
};
const GROUPS = ['', 'rollout'];

/** The command words at the start of argv ('rollout status'), as far as they name a command or group. */
export function topicOf(words: string[]): string {
  let topic = '';
  for (const word of words) {
    if (!COMMANDS[join(topic, word)] && !GROUPS.includes(join(topic, word))) break;
    topic = join(topic, word);
  }
  return topic;
}

export function parseInvocation(argv: string[]): Invocation {
  const { values, positionals } = tokenize(argv);
  const topic = topicOf(positionals);
  const words = positionals.slice(topic ? topic.split(' ').length : 0);
  try {
    return invocation(topic, words, values);
  } catch (err) {
    throw err instanceof CliError && err.topic === undefined ? usageError(err.message, topic) : err;
  }
}

function invocation(topic: string, args: string[], values: Values): Invocation {
  let words = args;
  if (values.help || GROUPS.includes(topic)) {
    if (!values.help && words.length > 0) throw usageError(`unknown command "${words[0]}" for "${join('kubectl neoset', topic)}"`);
    return { kind: 'help', topic };
  }
  const spec = COMMANDS[topic];
  for (const flag of Object.keys(values) as Flag[]) {
    if (!GLOBAL_FLAGS.includes(flag) && !spec.flags.includes(flag)) throw usageError(`unknown flag --${flag} for "kubectl neoset ${topic}"`);
  }
  // kubectl rollout's `TYPE NAME` form, as the seeds write it: `rollout undo neoset mysql`.
  if (words.length === 2 && NEOSET_TYPES.includes(words[0])) words = words.slice(1);
  if (words.length > 0 && spec.noName) throw usageError(`"kubectl neoset ${topic}" takes no NeoSet name, got ${words.join(' ')}`);
  if (words.length > 1) throw usageError(`"kubectl neoset ${topic}" takes one NeoSet name, got ${words.length}: ${words.join(' ')}`);
  if (words.length === 0 && spec.nameRequired) throw usageError(`"kubectl neoset ${topic}" needs a NeoSet name, e.g. kubectl neoset ${topic} mysql`);
  const cluster: ClusterFlags = { kubeconfig: values.kubeconfig, context: values.context, namespace: values.namespace };
  if (cluster.namespace !== undefined) checkName('--namespace', cluster.namespace, DNS_LABEL, 63);
  const neoset = words.length ? neosetName(words[0]) : undefined;
  return { kind: 'run', topic, cluster, command: command(spec.name, neoset, values) };
}

function command(name: Command['name'], neoset: string | undefined, values: Values): Command {
  const n = neoset as string; // present: nameRequired was checked for every command but get
  switch (name) {
    case 'get':
      return { name, neoset };
    case 'status':
      return { name, neoset: n, watch: values.watch ?? true, timeoutMs: timeout(values.timeout) };
    case 'history':
      return { name, neoset: n, revision: values.revision === undefined ? undefined : revisionNumber('--revision', values.revision, 1) };
    case 'undo': {
      // kubectl's --to-revision=0 means "the previous revision", as leaving it out does.
      const to = values['to-revision'] === undefined ? 0 : revisionNumber('--to-revision', values['to-revision'], 0);
      return { name, neoset: n, toRevision: to === 0 ? undefined : to, dryRun: values['dry-run'] ?? false, acceptDataFormatDowngrade: values['accept-data-format-downgrade'] ?? false };
    }
    case 'promote':
      return { name, neoset: n, full: values.full ?? false };
    case 'dashboard':
      return dashboard(values);
    case 'version':
      return versionCommand(values);
    default:
      return { name, neoset: n };
  }
}

type Values = ReturnType<typeof tokenize>['values'];

function tokenize(argv: string[]) {
  try {
    return parseArgs({ args: normalizeFlags(argv), options: OPTIONS, allowPositionals: true, allowNegative: true, strict: true });
  } catch (err) {
    const message = (err as Error).message;
    const unknown = /Unknown option '([^']+)'/.exec(message);
    throw usageError(unknown ? `unknown flag: ${unknown[1]}` : message);
  }
}

/**
 * What kubectl (cobra) accepts and parseArgs spells otherwise: booleans as `--watch=true|false`
 * (parseArgs knows `--watch` / `--no-watch`) and `-n=NAMESPACE`.
 */
function normalizeFlags(argv: string[]): string[] {
  const out: string[] = [];
  for (const [i, arg] of argv.entries()) {
    if (arg === '--') return out.concat(argv.slice(i));
    if (arg.startsWith('-n=')) {
      out.push('-n', arg.slice(3));
      continue;
    }
    // kubectl's --dry-run=server|none; the plugin's dry run is always the server's (admission answers).
    const dry = /^--dry-run=(server|none)$/.exec(arg);
    if (dry) {
      out.push(dry[1] === 'server' ? '--dry-run' : '--no-dry-run');
      continue;
    }
    if (arg === '--dry-run=client') throw usageError('--dry-run=client is not supported: use --dry-run=server (admission judges the rollback)');
    const m = /^(--(?:watch|full|help|all-namespaces|read-only|client|dry-run|accept-data-format-downgrade)|-w|-h|-A)=(.*)$/.exec(arg);
    if (!m) {
      out.push(arg);
      continue;
    }
    const long = SHORT_BOOLEANS[m[1]] ?? m[1];
    if (m[2] !== 'true' && m[2] !== 'false') throw usageError(`invalid value "${m[2]}" for ${long}: use true or false`);
    out.push(m[2] === 'true' ? long : `--no-${long.slice(2)}`);
  }
  return out;
}

const DEFAULT_PORT = 3100;
const DEFAULT_ADDRESS = '127.0.0.1';

function dashboard(values: Values): Command {
  // kubectl lets --all-namespaces silently win over -n; here asking for both is a mistake said aloud.
  if (values['all-namespaces'] && values.namespace !== undefined) throw usageError('--namespace and --all-namespaces cannot be used together');
  const port = values.port ?? String(DEFAULT_PORT);
  if (!/^\d+$/.test(port) || Number(port) > 65535) throw usageError(`invalid value "${port}" for --port: a port number from 0 to 65535 (0 picks a free one)`);
  const address = values.address ?? DEFAULT_ADDRESS;
  if (address !== 'localhost' && isIP(address) === 0) throw usageError(`invalid value "${address}" for --address: an IP address such as 127.0.0.1 (or localhost)`);
  return { name: 'dashboard', port: Number(port), address, allNamespaces: values['all-namespaces'] ?? false, readOnly: values['read-only'] ?? false };
}

/** `--function-url NAME=URL`, once per function at most. */
function versionCommand(values: Values): Command {
  const functionUrls: Partial<Record<FunctionName, string>> = {};
  for (const arg of values['function-url'] ?? []) {
    const eq = arg.indexOf('=');
    const name = arg.slice(0, Math.max(eq, 0)) as FunctionName;
    if (!FUNCTION_NAMES.includes(name)) throw usageError(`invalid value "${arg}" for --function-url: NAME=URL with NAME one of ${FUNCTION_NAMES.join(', ')}`);
    if (functionUrls[name] !== undefined) throw usageError(`--function-url names ${name} twice`);
    const url = URL.canParse(arg.slice(eq + 1)) ? new URL(arg.slice(eq + 1)) : undefined;
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw usageError(`invalid value "${arg}" for --function-url: the URL must be http:// or https://, e.g. ${name}=http://127.0.0.1:8081`);
    functionUrls[name] = url.href;
  }
  if (values.client && Object.keys(functionUrls).length > 0) throw usageError('--client prints only the plugin\'s version: not with --function-url');
  return { name: 'version', client: values.client ?? false, functionUrls };
}

const SHORT_BOOLEANS: Record<string, string> = { '-w': '--watch', '-h': '--help', '-A': '--all-namespaces' };

function timeout(text: string | undefined): number {
  if (text === undefined) return 0;
  const ms = parseDuration(text);
  if (ms === undefined) throw usageError(`invalid value "${text}" for --timeout: a duration such as 30s, 5m or 1h30m (0 waits forever)`);
  return ms;
}

function revisionNumber(flag: string, text: string, min: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min) throw usageError(`invalid value "${text}" for ${flag}: a revision number >= ${min}, as listed by kubectl neoset rollout history`);
  return Number(text);
}

const NEOSET_TYPES = ['neo', 'neoset', 'neosets', 'neoset.neo.io', 'neosets.neo.io'];

/** NAME, or TYPE/NAME as kubectl rollout accepts it (neo/mysql, neoset/mysql, neosets.neo.io/mysql). */
function neosetName(arg: string): string {
  const slash = arg.indexOf('/');
  if (slash >= 0 && !NEOSET_TYPES.includes(arg.slice(0, slash))) {
    throw usageError(`"${arg}" is not a NeoSet: give NAME or neoset/NAME`);
  }
  const name = arg.slice(slash + 1);
  checkName('NeoSet name', name, DNS_SUBDOMAIN, 253);
  return name;
}

// Kubernetes' name rules (RFC 1123): an object name may contain dots, a namespace may not.
const DNS_SUBDOMAIN = { pattern: /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, chars: "lowercase letters, digits, '-' and '.'" };
const DNS_LABEL = { pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, chars: "lowercase letters, digits and '-'" };

function checkName(what: string, value: string, rule: typeof DNS_LABEL, max: number): void {
  if (value.length > max || !rule.pattern.test(value)) {
    throw usageError(`invalid ${what} "${value}": ${rule.chars}, starting and ending with a letter or digit, at most ${max} characters`);
  }
}

const join = (a: string, b: string) => [a, b].filter(Boolean).join(' ');
