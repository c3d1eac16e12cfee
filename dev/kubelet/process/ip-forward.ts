// net.ipv4.ip_forward, which the CNI bridge plugin turns on at every ADD of a gateway bridge
// (isGateway: the host routes between the nodes' bridges and to the service network) and nothing in
// CNI turns off. The value the host had is recorded before the first node network of this machine
// takes it, in STATE_ROOT (a tmpfs: it goes, like the sysctl itself, with a reboot), and written back
// once no live process owns a node network any more — at a stop, or at the start after a stack that
// was killed (SIGKILL) and could not. While any node network lives, forwarding stays on: the nodes'
// networks are one machine's, and a second stack (or a test's kubelet) needs it as much.

import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ownerNow, pidAlive, STATE_ROOT } from './state-root.ts';

const SYSCTL = '/proc/sys/net/ipv4/ip_forward';
/** The host's value before the first node network, `0` or `1`. */
export const IP_FORWARD_RECORD = join(STATE_ROOT, 'ip_forward.before');

export const ipForward = (): string => readFileSync(SYSCTL, 'utf8').trim();

/** Records the host's value unless a record is there already (another node network took it first). Synchronous: before any CNI ADD. */
export function recordIpForward(): void {
  try {
    writeFileSync(IP_FORWARD_RECORD, `${ipForward()}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/** Whether a live process owns a node network (STATE_ROOT/neoset<N>/owner). */
function nodeNetworkInUse(): boolean {
  let dirs: string[] = [];
  try {
    dirs = readdirSync(STATE_ROOT);
  } catch {
    return false;
  }
  return dirs.some((dir) => {
    const owner = /^neoset\d+$/.test(dir) ? ownerNow(join(STATE_ROOT, dir)) : undefined;
    return owner !== undefined && pidAlive(owner);
  });
}

/**
 * Writes the recorded value back and removes the record, once no live process owns a node network
 * (call it after removing one's state directory); returns the value written when it changed the
 * host's, else undefined. Synchronous, so that the stop's deadline (sweepNow) can run it too; never
 * throws.
 */
export function restoreIpForward(): string | undefined {
  try {
    if (!existsSync(IP_FORWARD_RECORD) || nodeNetworkInUse()) return undefined;
    const before = readFileSync(IP_FORWARD_RECORD, 'utf8').trim();
    const now = ipForward();
    if (/^[01]$/.test(before) && before !== now) writeFileSync(SYSCTL, `${before}\n`);
    rmSync(IP_FORWARD_RECORD, { force: true });
    return before !== now ? before : undefined;
  } catch {
    return undefined;
  }
}
