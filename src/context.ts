import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { Config } from './config.js';
import type { Db } from './db/pool.js';
import type { SecretBox } from './lib/crypto.js';
import type { Logger } from './lib/logger.js';

/**
 * What every feature needs from the running service; built once at start-up (src/instance.ts).
 * The context depends on nothing above the core: what a folder adds to it is declared by its owner
 * (`declare module '…/context.js'`, as Fastify's decorators are), so the context never imports a
 * feature — `identities` (merchants/identity.service.ts), `files` (receipts/store.ts), `refusals`
 * (payments/refusals.ts), `creates` (payments/cascade/create-batches.ts) and `metrics`
 * (observability/metrics.ts).
 */
export interface AppContext {
  config: Config;
  db: Db;
  log: Logger;
  box: SecretBox;
  /** SHA-256 of the operator's bearer token. */
  adminTokenHash: Buffer;
}

/** The HTTP application as route modules see it: bodies, params and queries typed by their TypeBox schemas. */
export type RouteApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;
