// A container's log file written to an HTTP answer as kubelet's ReadLogs does (pkg/kubelet/kuberuntime/
// logs): the last `tailLines` lines, at most `limitBytes` bytes, and with `follow` what the container
// writes next, until it ends or the client goes away. Read from the disk in bounded chunks: a log of
// gigabytes costs no memory.

import { open, stat, type FileHandle } from 'node:fs/promises';
import type { Writable } from 'node:stream';

const CHUNK = 64 * 1024;
const FOLLOW_POLL_MS = 200;

export interface StreamOptions {
  tailLines?: number;
  limitBytes?: number;
  follow: boolean;
  /** While true, a follow keeps waiting for more (the container that writes this file runs). */
  live: () => boolean;
  /** Resolves when the client has gone (or the server stops): a follow ends then. */
  gone: Promise<void>;
}

/** The offset from which the file's last `lines` lines start (a last line without a newline counts). */
async function tailOffset(file: FileHandle, size: number, lines: number): Promise<number> {
  if (lines === 0) return size;
  const buf = Buffer.alloc(CHUNK);
  let end = size;
  let seen = 0;
  // A newline that ends the file closes the last line; it does not start one.
  let skipLast = true;
  while (end > 0) {
    const start = Math.max(0, end - CHUNK);
    const { bytesRead } = await file.read(buf, 0, end - start, start);
    for (let i = bytesRead - 1; i >= 0; i--) {
      if (buf[i] !== 0x0a) {
        skipLast = false;
        continue;
      }
      if (skipLast) {
        skipLast = false;
        continue;
      }
      if (++seen === lines) return start + i + 1;
    }
    end = start;
  }
  return 0;
}

/** Writes `[from, to)` of the file; false once `budget` bytes are written or the client is gone. */
async function copy(file: FileHandle, from: number, to: number, out: Writable, budget: { left: number }): Promise<number> {
  const buf = Buffer.alloc(CHUNK);
  let at = from;
  while (at < to && budget.left > 0 && !out.destroyed) {
    const { bytesRead } = await file.read(buf, 0, Math.min(CHUNK, to - at, budget.left), at);
    if (bytesRead === 0) break;
    budget.left -= bytesRead;
    at += bytesRead;
    // Back-pressure: a slow client holds the read, not the kubelet's memory.
    if (!out.write(Buffer.from(buf.subarray(0, bytesRead)))) await new Promise((resolve) => out.once('drain', resolve).once('close', resolve));
  }
  return at;
}

export async function streamLog(path: string, out: Writable, opts: StreamOptions): Promise<void> {
  const file = await open(path, 'r');
  try {
    let size = (await file.stat()).size;
    let at = opts.tailLines === undefined ? 0 : await tailOffset(file, size, opts.tailLines);
    const budget = { left: opts.limitBytes ?? Number.MAX_SAFE_INTEGER };
    at = await copy(file, at, size, out, budget);
    if (!opts.follow) return;
    let gone = false;
    void opts.gone.then(() => (gone = true));
    while (!gone && budget.left > 0 && !out.destroyed) {
      // Looked at before the size: what the container wrote before it ended is still sent.
      const live = opts.live();
      size = (await stat(path).catch(() => ({ size }))).size;
      if (size > at) at = await copy(file, at, size, out, budget);
      else if (!live) return;
      else await Promise.race([new Promise((resolve) => setTimeout(resolve, FOLLOW_POLL_MS)), opts.gone]);
    }
  } finally {
    await file.close();
  }
}
