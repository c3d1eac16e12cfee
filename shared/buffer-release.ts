// A large Buffer's memory given back when its last use ends, not at V8's next collection. An API
// answer or an event body is read into buffers that are garbage as soon as it is parsed; V8 counts
// them as external memory and collects only once that has grown by about 64 MiB, so in a burst of
// 1 MiB objects the garbage, not what runs hold, set the process's peak: heaptrack of reconcile in
// memory-bounded.test.ts's sweep (60 NeoSets of 1 MiB) put 150 MiB of its 178 MiB malloc peak in
// ArrayBuffers, 78 MiB of them this module's callers' own concatenations and grown stores.
/**
 * Smaller buffers are left to the collector. Past any read Node hands over (libuv reads 64 KiB at
 * most, a TLS record is 16 KiB), so that a socket's chunk is never detached, even when passed here.
 */
const RELEASE_MIN_BYTES = 80 * 1024;

/**
 * Detaches `buf`'s ArrayBuffer (transferred to length 0), which frees its memory at once. Only for
 * a buffer the caller allocated itself (Buffer.concat, allocUnsafeSlow, Buffer.from of a copy) and
 * that nothing else views: every view of it reads as empty afterwards. Never for a chunk Node gave
 * (a socket's read buffer may still be in use below JavaScript). A buffer that is a view of part of
 * a larger ArrayBuffer (Node's pool) is left alone.
 */
export function releaseBuffer(buf: Buffer | undefined): void {
  if (!buf || buf.byteLength < RELEASE_MIN_BYTES || buf.byteOffset !== 0 || buf.byteLength !== buf.buffer.byteLength) return;
  const arrayBuffer = buf.buffer as ArrayBuffer;
  if (arrayBuffer.detached) return;
  try {
    arrayBuffer.transfer(0);
  } catch {
    // Not detachable (a buffer Node marked so): the collector frees it.
  }
}
