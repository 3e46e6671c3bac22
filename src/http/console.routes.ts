import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply } from 'fastify';
import type { AppContext, RouteApp } from '../context.js';
import { DomainError } from '../errors.js';

/** Where `npm run build` puts the web app (web/, built by Vite): the same path from src/pages and dist/pages. */
const BUILT = fileURLToPath(new URL('../../dist/console/', import.meta.url));

/**
 * The console's policy: its own scripts only, styles from its own files or carrying this
 * response's nonce (Mantine's generated <style>), receipts shown inline from this origin, no
 * third-party origin anywhere, never framed.
 */
function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'self'",
    "frame-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * `/console`, `/cabinet` and `/merchant`: the people's web app (the operator console, the executor's cabinet, the merchant cabinet), one process with the API.
 * Hashed assets are cached for a year; the page itself never, and it carries the CSP with a fresh nonce.
 * Every screen works through the public API routes (/auth/v1, /admin/v1, /executor/v1, /merchant/v1) like any script would.
 */
export async function consoleRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  const indexFile = `${BUILT}index.html`;
  const page = existsSync(indexFile) ? readFileSync(indexFile, 'utf8') : undefined;
  if (!page) ctx.log.warn({ path: BUILT }, 'the console is not built: run `npm run build` to serve /console');

  if (page) {
    await app.register(fastifyStatic, {
      root: `${BUILT}assets`,
      prefix: '/console/assets/',
      decorateReply: false,
      index: false,
      immutable: true,
      maxAge: '365d',
      setHeaders: (res) => res.header('x-content-type-options', 'nosniff'),
    });
  }

  const sendPage = async (_request: unknown, reply: FastifyReply) => {
    if (!page) {
      return reply
        .status(503)
        .type('text/plain; charset=utf-8')
        .send('The console is not built. Run `npm run build` (npm install does it too) and restart Kassir.\n');
    }
    const nonce = randomBytes(16).toString('base64');
    return reply
      .header('content-security-policy', contentSecurityPolicy(nonce))
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .type('text/html; charset=utf-8')
      .send(page.replaceAll('__CSP_NONCE__', nonce));
  };
  app.get('/console', { schema: { hide: true } }, sendPage);
  app.get('/console/*', { schema: { hide: true } }, sendPage);
  // The executor's cabinet: the same app, its own area (mobile-first).
  app.get('/cabinet', { schema: { hide: true } }, sendPage);
  app.get('/cabinet/*', { schema: { hide: true } }, sendPage);
  // The merchant cabinet: the same app, its own area.
  // An unknown path under its API (/merchant/v1/...) is an API call gone wrong, not a screen: the JSON 404.
  app.get('/merchant', { schema: { hide: true } }, sendPage);
  app.get('/merchant/*', { schema: { hide: true } }, async (request, reply) => {
    if (/^\/merchant\/v\d+(\/|$)/.test(request.url)) throw new DomainError('NOT_FOUND', `No route GET ${request.url.split('?')[0]}`);
    return sendPage(request, reply);
  });
}
