import { defineConfig } from 'vitest/config';

// Two projects: `unit` (pure core and hono apps, no cluster) and `integration` (one real control plane
// started by test/cluster/global-setup.ts and shared by every integration file).
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
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/cluster/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          // One control plane on 2 cores: files run one after another.
          fileParallelism: false,
        },
      },
    ],
  },
});
