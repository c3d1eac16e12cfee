// Who called, as far as TLS proved it (SPEC §2.3): with a client CA configured (serve.ts), each
// request's env says whether its connection presented a certificate that chains to that CA. Routes
// that only the API server may call (admission's /mutate and /validate) refuse the others with 401.
import type { MiddlewareHandler, Context } from 'hono';
import type { TLSSocket } from 'node:tls';

export interface ClientCert {
  /** A client CA is configured: a certificate is required where requireClientCert is used. */
  required: boolean;
  verified: boolean;
  /** The verified certificate's subject CN, for the log. */
  subject?: string;
  /** Why it did not verify (OpenSSL's code, e.g. UNABLE_TO_VERIFY_LEAF_SIGNATURE), or that none came. */
  error?: string;
}

export interface ClientCertEnv {
  clientCert?: ClientCert;
}

export function describeClientCert(socket: TLSSocket): Required<ClientCertEnv> {
  if (socket.authorized) {
    const cn = socket.getPeerCertificate()?.subject?.CN;
    return { clientCert: { required: true, verified: true, subject: Array.isArray(cn) ? cn.join(',') : cn } };
  }
  const presented = Object.keys(socket.getPeerCertificate?.() ?? {}).length > 0;
  const error = presented ? String(socket.authorizationError ?? 'not verified') : 'no client certificate';
  return { clientCert: { required: true, verified: false, error } };
}

/** The request's ClientCert; absent when no client CA is configured (nothing was asked for). */
export const clientCertOf = (c: Context): ClientCert | undefined => (c.env as ClientCertEnv | undefined)?.clientCert;

/** 401 for a request whose connection did not prove a certificate of the client CA (when one is configured). */
export function requireClientCert(onRefused: (c: Context, why: string) => Response | Promise<Response>): MiddlewareHandler {
  return async (c, next) => {
    const cert = clientCertOf(c);
    if (cert?.required && !cert.verified) return onRefused(c, cert.error ?? 'not verified');
    await next();
  };
}
