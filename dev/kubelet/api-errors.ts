// client-node throws ApiException (`code`) for API answers and plain errors (`statusCode`) from Watch.

export function statusCode(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, statusCode } = err as { code?: unknown; statusCode?: unknown };
  if (typeof code === 'number') return code;
  if (typeof statusCode === 'number') return statusCode;
  return undefined;
}

export function describeError(err: unknown): string {
  const code = statusCode(err);
  const body = (err as { body?: unknown })?.body;
  const message = typeof body === 'string' ? body : err instanceof Error ? err.message : String(err);
  return code === undefined ? message : `${code}: ${message.slice(0, 300)}`;
}
