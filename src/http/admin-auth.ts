import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { hashToken } from '../lib/crypto.js';

/** The operator API's bearer-token check (DESIGN.md "The operator side"). */
export function adminAuth(app: FastifyInstance, ctx: AppContext): void {
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    if (!match) throw new DomainError('AUTH_001', 'Send Authorization: Bearer <ADMIN_TOKEN>');
    if (!timingSafeEqual(hashToken(match[1]!), ctx.adminTokenHash)) throw new DomainError('AUTH_002', 'Invalid operator token');
    request.operator = 'admin';
  });
  app.addHook('preValidation', async (request: FastifyRequest) => {
    // Every operator POST/PUT/PATCH takes a JSON object; a bare request means "no options" (a
    // reason, a grace period), and one whose fields are required is told which field is missing.
    if (request.method !== 'GET' && request.body === undefined) request.body = {};
  });
  // An operator's change to a key, a secret, a terminal, a rate or a route applies to this
  // instance's very next merchant request; other instances hear of it from the database
  // (IdentityCache). Before the answer leaves, after the change was committed.
  app.addHook('onSend', async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') ctx.identities.forget();
  });
}
