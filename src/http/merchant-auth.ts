import { pipeline } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { findIdentity } from '../merchants/identity.service.js';
import { isMultipart } from './multipart.js';
import { BodySigner } from './signature.js';

/**
 * Installs the merchant API's authentication on a plugin scope (spec "Authentication";
 * DESIGN.md decisions 1–3): `X-Identity` names the terminal, `X-Signature` is checked over the raw
 * body bytes (a multipart body as it streams in), in constant time; only then is the body's JSON
 * looked at.
 */
export function merchantAuth(app: FastifyInstance, ctx: AppContext): void {
  // The spec's "Invalid parameters" is PAY_002 on every merchant route that names no code of its own;
  // every body is signed, a multipart one checked by readUpload once it has been read.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, invalidCode: route.config?.invalidCode ?? 'PAY_002', signed: true };
  });
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const apiKey = request.headers['x-identity'];
    const signature = request.headers['x-signature'];
    if (typeof apiKey !== 'string' || apiKey === '' || typeof signature !== 'string' || signature === '') {
      throw new DomainError('AUTH_001', 'Send the X-Identity (API key) and X-Signature headers');
    }
    const identity = await findIdentity(ctx, apiKey);
    if (!identity)
      throw new DomainError(
        'AUTH_002',
        'Unknown API key: X-Identity must be the API key of one of your terminals (a rotated key stops at the end of its grace period)',
      );
    request.merchant = identity;
    request.signer = new BodySigner(identity.secrets, request.method, ctx.config.publicBaseUrl + request.url);
  });

  // A JSON body is signed as a whole by the JSON parser (src/http/json.ts); a multipart body is
  // signed while it streams, through this tap, to the upload route that reads it.
  app.addHook('preParsing', async (request, _reply: FastifyReply, payload) => {
    if (!request.signer || !isMultipart(request)) return payload;
    const tap = request.signer.tap();
    // pipeline, not pipe: an aborted upload must fail the request instead of hanging it — the
    // failure destroys the tap, so the route reading it gets the error; the callback has nothing to add.
    pipeline(payload, tap, () => undefined);
    return tap;
  });

  app.addHook('preValidation', async (request: FastifyRequest) => {
    if (isMultipart(request)) {
      if (!request.routeOptions.config.upload) throw new DomainError('UNSUPPORTED_MEDIA_TYPE', 'This route takes application/json, not multipart/form-data');
      // A multipart body is read by the route itself, as a stream; readUpload checks the
      // signature once the last byte has been read, before anything read is used.
      return;
    }
    const signature = request.headers['x-signature'] as string;
    if (!request.signer) throw new DomainError('AUTH_002');
    if (!request.signer.matches(signature)) throw request.signer.mismatch();
    if (!request.merchant?.terminalActive) throw new DomainError('AUTH_003');
  });
}
