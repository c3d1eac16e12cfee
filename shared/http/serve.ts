// Starts a function's hono app on $PORT (default 8080) and stops gracefully on SIGTERM/SIGINT,
// as Knative expects of a container (it sends SIGTERM, then waits terminationGracePeriodSeconds).
import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';

export function listen(app: Hono, name: string, port = Number(process.env.PORT ?? 8080)): Promise<ServerType> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port, hostname: process.env.HOST ?? '0.0.0.0' }, (info) => {
      process.stdout.write(`${JSON.stringify({ level: 30, fn: name, msg: 'listening', port: info.port })}\n`);
      resolve(server);
    });
    const stop = () => server.close(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
