import { defineConfig } from 'vitest/config';
import { BALANCE_FILES, SERVICE_FILES } from './test/lanes.ts';

// Projects: `unit` (pure core and hono apps, no cluster), and the integration tests in two lanes that
// run side by side, each file of a lane after the other:
//   - `integration`: one real control plane started by test/cluster/global-setup.ts and shared by the
//     lane's files;
//   - `integration-services`: the files that take the machine's one service network (kube-proxy's
//     nftables tables, the API server's interface: dev/cluster/service-network.ts) — Services and
//     DNS, Knative Eventing, `npm run dev`, process-mode kubelets — each with control planes of its
//     own. They cannot run beside each other; they run beside the first lane, whose control plane
//     they never touch.
// vitest itself runs every file of the projects that turn file parallelism off one after another,
// whichever project they belong to: `npm test` (test/run.ts) runs the lanes in two vitest processes.
// `npx vitest run test/integration/<file>` runs one file in whichever lane it belongs to.
// Which files run in the second lane, and why: test/lanes.ts.
const SECOND_LANE = [...SERVICE_FILES, ...BALANCE_FILES];

const integration = {
  environment: 'node' as const,
  globalSetup: ['test/cluster/global-setup.ts'],
  testTimeout: 120_000,
  hookTimeout: 600_000,
  // expect.poll waits 1 s by default: a browser's first render, or a process's, can take longer on a
  // loaded 2-core machine with both lanes running (the last CI: the dashboard's pods not drawn in 1 s).
  expect: { poll: { timeout: 10_000 } },
  // A lane's files share the machine's 2 cores with the other lane: one after another.
  fileParallelism: false,
};

export default defineConfig({
  test: {
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/oracle/**/*.test.ts', 'test/memory-api/**/*.test.ts', 'shared/**/*.test.ts', 'functions/**/*.test.ts'],
          environment: 'node',
        },
      },
      { test: { name: 'integration', include: ['test/integration/**/*.test.ts'], exclude: SECOND_LANE, ...integration } },
      { test: { name: 'integration-services', include: SECOND_LANE, ...integration } },
    ],
  },
});
