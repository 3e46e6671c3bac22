import { randomBytes } from 'node:crypto';
import apiReference from '@scalar/fastify-api-reference';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Where the interactive API reference is served. */
export const DOCS_PATH = '/docs';

/** Stands in the rendered page for the nonce; each answer replaces it with a fresh one. */
const NONCE_SLOT = 'kassirCspNonceSlot';

/**
 * The reference's policy: its own script and the inline one that starts it, by this response's
 * nonce; the document from this origin; no third-party origin anywhere, never framed. Styles
 * allow 'unsafe-inline': the reference renders `style` attributes, which no nonce can cover.
 */
function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * `/docs`: the interactive API reference (Scalar) rendered from `/openapi.json`, every asset served
 * from here (the reference's script ships inside its npm package): no CDN, no web fonts, no
 * telemetry, and none of the features that call Scalar's own services — the "try it" client and
 * its proxy, the AI agent, MCP, sharing. The page carries a nonce CSP that holds it to this origin.
 */
export async function apiDocs(app: FastifyInstance): Promise<void> {
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    reply.header('x-content-type-options', 'nosniff');
    if (request.url.endsWith('/js/scalar.js')) {
      // The same script until the package is upgraded; an hour keeps page loads light.
      reply.header('cache-control', 'public, max-age=3600');
      return payload;
    }
    if (typeof payload !== 'string' || !String(reply.getHeader('content-type')).startsWith('text/html')) return payload;
    const nonce = randomBytes(16).toString('base64');
    reply
      .header('content-security-policy', contentSecurityPolicy(nonce))
      .header('cache-control', 'no-store')
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer');
    return payload.replaceAll(NONCE_SLOT, nonce);
  });

  await app.register(apiReference, {
    routePrefix: DOCS_PATH,
    configuration: {
      // The document the service already serves (other tools read it there too).
      url: '/openapi.json',
      pageTitle: 'Kassir API reference',
      nonce: NONCE_SLOT,
      theme: 'default',
      withDefaultFonts: false,
      telemetry: false,
      hideClientButton: true,
      hideTestRequestButton: true,
      showDeveloperTools: 'never',
      documentDownloadType: 'json',
      mcp: { disabled: true },
      agent: { disabled: true },
      defaultOpenFirstTag: true,
      orderRequiredPropertiesFirst: true,
    },
  });
}
