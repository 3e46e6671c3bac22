import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../errors.js';
import type { PersonActor } from '../lib/actor.js';

/** The session cookie: HttpOnly, SameSite=Strict, Secure when the request came over HTTPS. */
export const SESSION_COOKIE = 'kassir_session';

/** Sets the session cookie after sign-in; Secure when the request came over HTTPS (behind a proxy: TRUST_PROXY). */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string, maxAgeSeconds: number): void {
  reply.setCookie(SESSION_COOKIE, token, {
    path: '/',
    httpOnly: true,
    sameSite: 'strict',
    secure: request.protocol === 'https',
    maxAge: maxAgeSeconds,
  });
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'strict', secure: request.protocol === 'https' });
}

/** The signed-in person of a person route (set by personAccess). */
export function person(request: FastifyRequest): PersonActor {
  const actor = request.actor;
  if (actor?.kind !== 'user') throw new DomainError('AUTH_001', 'Sign in first (POST /auth/v1/login)');
  return actor;
}
