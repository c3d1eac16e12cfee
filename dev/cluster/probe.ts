// Health probes of control-plane processes: a GET that reports "not up yet" instead of throwing,
// and a poll loop that gives up early when the process it waits for has died.
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import type { ManagedProcess } from './processes.ts';

export interface TlsClient {
  ca: string;
  cert?: string;
  key?: string;
}

export interface ProbeResult {
  status: number;
  body: string;
}

/** GET `url`; undefined when nothing answers (refused, reset, timeout). */
export function probe(url: string, tls?: TlsClient, timeoutMs = 2000): Promise<ProbeResult | undefined> {
  return new Promise((resolve) => {
    const get = url.startsWith('https:') ? httpsGet : httpGet;
    const request = get(url, { ...tls, timeout: timeoutMs }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', () => resolve(undefined));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(undefined));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `url` until it answers 200, failing fast (with its log) if `process` exits first. */
export async function waitForHealthy(
  process: ManagedProcess,
  url: string,
  tls: TlsClient | undefined,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: ProbeResult | undefined;
  while (Date.now() < deadline) {
    if (process.hasExited()) {
      throw new Error(`${process.name} exited (${await process.exited}) before ${url} was healthy; log ${process.logPath}:\n${process.tail()}`);
    }
    last = await probe(url, tls);
    if (last?.status === 200) return;
    await sleep(100);
  }
  const answer = last ? `last answer ${last.status}: ${last.body.slice(0, 2000)}` : 'no answer';
  throw new Error(`${process.name} not healthy at ${url} after ${timeoutMs} ms (${answer}); log ${process.logPath}:\n${process.tail()}`);
}
