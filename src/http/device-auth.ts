import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { deviceByToken } from '../devices/devices.service.js';
import { DomainError } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The phone that sent the request (device API only). */
    device?: import('../devices/devices.repo.js').DeviceRow;
  }
}

/** The device API's bearer-token check: the token names a device in use whose executor is active. */
export function deviceAuth(app: FastifyInstance, ctx: AppContext): void {
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    if (!match) throw new DomainError('AUTH_001', 'Send Authorization: Bearer <device token> (POST /executor/v1/devices gives one)');
    const device = await deviceByToken(ctx, match[1]!);
    if (!device) throw new DomainError('AUTH_002', 'Invalid device token: revoked, unknown, or its executor is switched off');
    request.device = device;
  });
}

/** Where the forwarders post: `<prefix>/<device token>/<format>`; the log masks the token. */
export const DEVICE_HOOKS_PREFIX = '/device/v1/hooks';

/**
 * The forwarders' routes: the device token is in the path (SMS Gateway for Android cannot set a
 * header), and each format's signature is checked over the raw bytes, so the body is kept as
 * sent (JSON or a form) for the route to read.
 */
export function deviceHookAuth(app: FastifyInstance, ctx: AppContext): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, { raw: body }));
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (_request, body, done) => done(null, { raw: body, form: true }));
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const token = (request.params as { token?: string }).token ?? '';
    const device = token ? await deviceByToken(ctx, token) : undefined;
    if (!device) throw new DomainError('AUTH_002', 'Invalid device token in the URL: revoked, unknown, or its executor is switched off');
    request.device = device;
  });
}
