import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import rateLimit from '@fastify/rate-limit';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { DomainError } from '../errors.js';
import { RECEIPT_FILES } from '../receipts/upload.js';
import { errorText, isErrorText, type Lang, pickLang, TEXTS } from './i18n.js';
import { checkPayer, confirmFromPage, loadPage, PageNotFound, pageStatus } from './pages.service.js';
import { type AssetUrls, renderMessage, renderPage } from './render.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A payment page route, and so how its failures read: a page, JSON for the script, or back to the form. */
    page?: 'html' | 'json' | 'confirm' | 'asset';
  }
}

/**
 * Only the page's own files; no inline script or style, no third party, never framed. The
 * page's requests go to its own origin (the page and its endpoints share one path).
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

/**
 * Requests per token per minute. The page polls its status every 3 s (20 a minute); a payer with
 * the page open twice stays well inside. Limits are per instance (in memory): they exist to stop
 * a script hammering one page, not to count exactly across instances.
 */
const LIMITS = { page: 60, status: 90, confirm: 10, unknown: 60 };
const WINDOW_MS = 60_000;
const TokenParams = Type.Object({ token: Type.String() });

interface Asset {
  body: Buffer;
  type: string;
}

/** Reads the page's static files once and names them by content hash, so browsers may cache them for good. */
function loadAssets(mount: string): { urls: AssetUrls; files: Map<string, Asset> } {
  const dir = new URL('./assets/', import.meta.url);
  const files = new Map<string, Asset>();
  const add = (file: string, ext: string, type: string): string => {
    const body = readFileSync(new URL(file, dir));
    const name = `${file.slice(0, -ext.length - 1)}.${createHash('sha256').update(body).digest('hex').slice(0, 12)}.${ext}`;
    files.set(name, { body, type });
    return `${mount}/assets/${name}`;
  };
  return {
    urls: {
      css: add('page.css', 'css', 'text/css; charset=utf-8'),
      js: add('page.js', 'js', 'text/javascript; charset=utf-8'),
      icon: add('favicon.svg', 'svg', 'image/svg+xml'),
    },
    files,
  };
}

function langOf(request: FastifyRequest): Lang {
  const query = request.query;
  return pickLang(typeof query === 'object' && query !== null && 'lang' in query ? query.lang : undefined, request.headers['accept-language']);
}

function wantsJson(request: FastifyRequest): boolean {
  return /\bapplication\/json\b/i.test(request.headers.accept ?? '');
}

function tokenOf(request: FastifyRequest): string {
  const params = request.params;
  return typeof params === 'object' && params !== null && 'token' in params && typeof params.token === 'string' ? params.token : '';
}

/**
 * The payer's reading of a failure: a catalogue key the page has a sentence for, or INTERNAL; a
 * domain error keeps the status the HTTP edge gives it (`statusOf`).
 */
function classify(error: FastifyError | DomainError, statusOf: (error: DomainError) => number): { status: number; code: string; text: string } {
  if (error instanceof DomainError) return { status: statusOf(error), code: error.code, text: error.key };
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { status: 413, code: 'PAYLOAD_TOO_LARGE', text: 'PAYLOAD_TOO_LARGE' };
  if (error.statusCode === 429) return { status: 429, code: 'RATE_LIMITED', text: 'RATE_LIMITED' };
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) return { status: 400, code: 'PAY_002', text: 'PAY_002' };
  return { status: 500, code: 'PAY_001', text: 'INTERNAL' };
}

/**
 * The hosted payment page (`payment_url` = PAYMENT_PAGE_URL + `/<page token>`): the page, its
 * status document and "I paid", authorised by the token in the path alone — no merchant secret
 * ever reaches the browser.
 */
export async function pagesRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  const mount = new URL(ctx.config.paymentPageUrl).pathname.replace(/\/+$/, '');
  const assets = loadAssets(mount);
  const baseOf = (token: string) => `${mount}/${token}`;

  await app.register(rateLimit, { global: false });
  const perToken = (max: number) => ({
    max,
    timeWindow: WINDOW_MS,
    keyGenerator: (request: FastifyRequest) => `page:${tokenOf(request)}`,
    errorResponseBuilder: () => new DomainError('RATE_LIMITED', 'Too many requests for this payment page'),
  });

  app.addHook('onSend', async (request, reply, payload) => {
    reply.headers(SECURITY_HEADERS);
    // The page and its status carry the requisites and the token: never kept by a cache.
    if (request.routeOptions.config?.page !== 'asset' || reply.statusCode !== 200) reply.header('cache-control', 'no-store');
    return payload;
  });

  const renderError = (error: FastifyError | DomainError, request: FastifyRequest, reply: FastifyReply, statusOf: (error: DomainError) => number) => {
    const lang = langOf(request);
    const kind = request.routeOptions.config?.page ?? 'html';
    const { status, code, text } = classify(error, statusOf);
    if (status >= 500) request.log.error({ err: error }, 'payment page failed');
    // Answered before the body was read whole (an unknown token, an upload refused part-way): the
    // rest is still on the wire, so this connection cannot carry another request.
    if (!request.raw.complete) reply.header('connection', 'close');
    if (kind === 'json' || (kind === 'confirm' && wantsJson(request))) {
      const data = error instanceof DomainError ? error.data : undefined;
      return reply.status(status).send({ error: code, message: errorText(lang, text), ...(data ? { data } : {}) });
    }
    if (kind === 'confirm' && !(error instanceof PageNotFound) && status < 500) {
      // The form without JavaScript: back to the page, which shows the sentence by the form.
      // The token as it came: encoded, since the failure may be that it holds what no URL may.
      return reply.redirect(`${baseOf(encodeURIComponent(tokenOf(request)))}?lang=${lang}&error=${encodeURIComponent(text)}`, 303);
    }
    const page = error instanceof PageNotFound || status === 404 ? 'notFound' : status === 429 ? 'tooMany' : 'failed';
    return reply
      .status(status)
      .type('text/html; charset=utf-8')
      .header('content-language', lang)
      .send(renderMessage(page, lang, assets.urls));
  };
  // Every failure under the page's path reads as the page's own, not as the API's JSON body.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, renderError };
  });

  app.get(
    `${mount}/assets/:name`,
    { config: { page: 'asset' }, schema: { hide: true, params: Type.Object({ name: Type.String() }) } },
    async (request, reply) => {
      const asset = assets.files.get(request.params.name);
      if (!asset) throw new PageNotFound();
      return reply.type(asset.type).header('cache-control', 'public, max-age=31536000, immutable').send(asset.body);
    },
  );

  app.get(
    `${mount}/:token`,
    {
      config: { page: 'html', rateLimit: perToken(LIMITS.page) },
      // lang and error are read for what they say, whatever they hold: never a reason to refuse the page.
      schema: { hide: true, params: TokenParams, querystring: Type.Object({ lang: Type.Optional(Type.Unknown()), error: Type.Optional(Type.Unknown()) }) },
    },
    async (request, reply) => {
      const lang = langOf(request);
      const payment = await checkPayer(ctx, await loadPage(ctx, request.params.token), { ip: request.ip });
      const error = isErrorText(request.query.error) ? request.query.error : undefined;
      const html = await renderPage({ payment, lang, base: baseOf(payment.page_token), assets: assets.urls, now: new Date(), error });
      return reply.type('text/html; charset=utf-8').header('content-language', lang).header('vary', 'Accept-Language').send(html);
    },
  );

  app.get(
    `${mount}/:token/status`,
    {
      config: { page: 'json', rateLimit: perToken(LIMITS.status) },
      // device: the page script's fingerprint of the payer's browser (risk rules, issue 36).
      schema: { hide: true, params: TokenParams, querystring: Type.Object({ lang: Type.Optional(Type.Unknown()), device: Type.Optional(Type.Unknown()) }) },
    },
    async (request) => {
      const payment = await loadPage(ctx, request.params.token);
      const device = request.query.device;
      return pageStatus(device === undefined ? payment : await checkPayer(ctx, payment, { device }));
    },
  );

  app.post(
    `${mount}/:token/confirm`,
    {
      config: { page: 'confirm', upload: RECEIPT_FILES, invalidCode: 'PAY_002', rateLimit: perToken(LIMITS.confirm) },
      schema: { hide: true, params: TokenParams },
    },
    async (request, reply) => {
      const lang = langOf(request);
      const payment = await loadPage(ctx, request.params.token);
      const upload = await request.readUpload();
      const status = await confirmFromPage(ctx, payment, upload);
      if (wantsJson(request)) return { ...status, message: TEXTS[lang].checkingTitle };
      return reply.redirect(`${baseOf(payment.page_token)}?lang=${lang}`, 303);
    },
  );

  // Anything else under the page's path is a page that does not exist (a mistyped link).
  if (mount !== '') {
    const unknown = {
      config: {
        page: 'html' as const,
        priority: 'normal' as const,
        rateLimit: { max: LIMITS.unknown, timeWindow: WINDOW_MS, errorResponseBuilder: () => new DomainError('RATE_LIMITED') },
      },
      schema: { hide: true },
    };
    const notFound = async (): Promise<never> => {
      throw new PageNotFound();
    };
    app.get(mount, unknown, notFound);
    app.get(`${mount}/*`, unknown, notFound);
  }
}
