// Entry point run by bin/kubectl-neoset (with the project's Node 24): `kubectl neoset ...`.
import { setTimeout as sleep } from 'node:timers/promises';
import { main } from './cli.ts';

process.exitCode = await main(process.argv.slice(2), {
  out: process.stdout,
  err: process.stderr,
  now: Date.now,
  sleep: (ms) => sleep(ms),
});
