import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { operatorAccess } from './access.js';
import { csvExport } from './csv-export.js';
import { operatorIdempotency } from './idempotency.js';

/** The operator API's scope (DESIGN.md "The operator side"): who may call each route (src/http/access.ts), and what every operator route shares. */
export function adminAuth(app: FastifyInstance, ctx: AppContext): void {
  operatorAccess(app, ctx);
  csvExport(app);
  operatorIdempotency(app, ctx);
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
