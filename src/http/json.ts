import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError, type ErrorKey } from '../errors.js';
import { InputProblem, parseJson } from '../lib/input.js';

/** Marks a body that cannot be taken, with the sentence why; answered only after authentication. */
const UNREADABLE = Symbol('unreadable body');

/**
 * JSON bodies are read whole, fed to the request's signature (when it has one) and parsed here by
 * the input rules of src/lib/input.ts (exact numbers, no control characters, …), but never
 * rejected here: a body that cannot be taken is marked and answered with the route's
 * `*_001/PAY_002` error only after the signature has been checked, so an unauthenticated caller
 * learns nothing about how its body was read (DESIGN.md decision 4).
 */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  // No route reads plain text: such a body is answered 415, not taken unsigned and unread (a signed
  // request's signature covers only bodies the parsers here feed to it).
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const raw = typeof body === 'string' ? Buffer.from(body) : body;
    // A signed (merchant) request's signature covers these very bytes; see merchantAuth.
    request.signer?.update(raw);
    const text = raw.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, parseJson(text));
    } catch (err) {
      if (!(err instanceof InputProblem)) return done(err as Error, undefined);
      done(null, { [UNREADABLE]: err.message });
    }
  });
}

/**
 * Multipart bodies are handed to the route as the (signature-tapped) stream itself; upload routes
 * read it with busboy (src/http/multipart.ts), so the bytes the signature covers are exactly the
 * bytes parsed.
 */
export function registerMultipartPassThrough(app: FastifyInstance): void {
  app.addContentTypeParser('multipart/form-data', (_request, payload, done) => done(null, payload));
}

/** Throws the route's invalid-parameters error, saying why, when the JSON body cannot be taken. */
export function rejectInvalidJson(request: FastifyRequest, code: ErrorKey): void {
  const body = request.body as Record<PropertyKey, unknown> | undefined;
  const problem = body && typeof body === 'object' ? body[UNREADABLE] : undefined;
  if (typeof problem === 'string') throw new DomainError(code, problem);
}
