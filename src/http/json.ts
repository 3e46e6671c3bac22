import type { FastifyInstance, FastifyRequest } from 'fastify';
import sjson from 'secure-json-parse';
import { ApiError, type ErrorKey } from './errors.js';

/** Marks a body that was not valid JSON; answered only after authentication (see below). */
const INVALID_JSON = Symbol('invalid json');

/**
 * JSON bodies are read whole, fed to the request's signature (when it has one) and parsed here,
 * but never rejected here: a malformed body is marked and answered
 * with the route's `*_001/PAY_002` error only after the signature has been checked, so an
 * unauthenticated caller learns nothing about how its body was read (DESIGN.md decision 4).
 */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const raw = typeof body === 'string' ? Buffer.from(body) : body;
    // A signed (merchant) request's signature covers these very bytes; see merchantAuth.
    request.signer?.update(raw);
    const text = raw.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      // Drops __proto__/constructor keys: a body must never reach an object's prototype.
      done(null, sjson.parse(text, null, { protoAction: 'remove', constructorAction: 'remove' }));
    } catch {
      done(null, { [INVALID_JSON]: true });
    }
  });
}

/**
 * Multipart bodies are handed to the route as the (signature-tapped) stream itself; upload routes
 * read it with busboy (src/receipts/upload.ts), so the bytes the signature covers are exactly the
 * bytes parsed.
 */
export function registerMultipartPassThrough(app: FastifyInstance): void {
  app.addContentTypeParser('multipart/form-data', (_request, payload, done) => done(null, payload));
}

/** Throws the route's invalid-parameters error when the body was not valid JSON. */
export function rejectInvalidJson(request: FastifyRequest, code: ErrorKey): void {
  const body = request.body as Record<PropertyKey, unknown> | undefined;
  if (body && typeof body === 'object' && body[INVALID_JSON]) {
    throw new ApiError(code, 'The request body is not valid JSON');
  }
}
