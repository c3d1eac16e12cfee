// The resync sweep's metrics (SPEC §2.5 "concurrent ticks share one sweep"; shared/k8s/sweep.ts), in
// the functions' one registry: how long a sweep takes against the tick's minute, and how much it did.
import { Counter, Gauge, Histogram } from 'prom-client';
import { registry } from './registry.ts';

export const sweepDuration = new Histogram({
  name: 'neoset_sweep_duration_seconds',
  help: "A resync sweep, from the first tick that started it until the last NeoSet run it holds has finished (the ticks that joined it included). Near or past 60 s, sweeps outlast the PingSource's minute.",
  buckets: [0.5, 1, 2.5, 5, 10, 20, 30, 45, 60, 90, 120, 300],
  registers: [registry],
});

export const sweepNeoSets = new Gauge({
  name: 'neoset_sweep_neosets',
  help: 'NeoSets the last finished resync sweep listed.',
  registers: [registry],
});

export const sweepRuns = new Gauge({
  name: 'neoset_sweep_reconciles',
  help: 'NeoSet runs the last finished resync sweep made: its NeoSets once, plus again those that a tick arriving later found already started.',
  registers: [registry],
});

export const sweepTicks = new Counter({
  name: 'neoset_sweep_ticks_total',
  help: 'Resync ticks taken, by how: started (a sweep), joined (a sweep in flight: its NeoSet runs not yet started shared), redelivered (the same event again while it is in flight: its answer shared).',
  labelNames: ['how'] as const,
  registers: [registry],
});

export const fastTickWrites = new Counter({
  name: 'neoset_fast_tick_requests_total',
  help: "The fast tick's requests (SPEC §2.4, shared/k8s/fast-tick.ts), by op (stamp, create, delete, read) and result (ok, absent, conflict, error). Stamp errors mean a lost event costs up to the slow tick.",
  labelNames: ['op', 'result'] as const,
  registers: [registry],
});
