// Pod IPs from the node's /24: one per pod for its whole life (the IP is read back from the pod's
// status, so it survives a restart of the simulated kubelet), reused only after the pod is gone.

export interface PodIPs {
  /** The pod's IP: the one it has, or the next free one. */
  ensure(uid: string, current: string | undefined): string;
  release(uid: string): void;
}

export function createPodIPs(subnet: string): PodIPs {
  const byUid = new Map<string, string>();
  let next = 0;
  return {
    ensure(uid, current) {
      if (current) byUid.set(uid, current);
      const known = byUid.get(uid);
      if (known) return known;
      const used = new Set(byUid.values());
      for (let i = 0; i < 253; i++) {
        const ip = `${subnet}.${2 + ((next + i) % 253)}`;
        if (used.has(ip)) continue;
        next = (next + i + 1) % 253;
        byUid.set(uid, ip);
        return ip;
      }
      throw new Error(`no free pod IP left in ${subnet}.0/24`);
    },
    release(uid) {
      byUid.delete(uid);
    },
  };
}
