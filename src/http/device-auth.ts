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
