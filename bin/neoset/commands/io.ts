// Where a command writes: stdout for results, stderr for errors (so `> file` keeps only results).
export interface Io {
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
  now(): number;
  sleep(ms: number): Promise<void>;
}
