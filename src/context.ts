import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { Config } from './config.js';
import type { Db } from './db/pool.js';
import type { SecretBox } from './lib/crypto.js';
import type { Logger } from './lib/logger.js';
import type { IdentityCache } from './merchants/identity.cache.js';
import type { MerchantIdentity } from './merchants/identity.service.js';
import type { ServiceMetrics } from './observability/metrics.js';
import type { CreateBatches } from './payments/cascade/create-batches.js';
import type { RefusalLog } from './payments/refusals.js';
import type { FileStore } from './receipts/store.js';

/** What every feature needs from the running service; built once at start-up. */
export interface AppContext {
  config: Config;
  db: Db;
  log: Logger;
  box: SecretBox;
  /** SHA-256 of the operator's bearer token. */
  adminTokenHash: Buffer;
  /** The merchant API's callers, kept between requests while no change can have been missed. */
  identities: IdentityCache<MerchantIdentity>;
  /** Where uploaded receipts are stored. */
  files: FileStore;
  /** Payment creates refused for want of capacity (lost demand), written in the background. */
  refusals: RefusalLog;
  /** The executors' cascade of payment creates, taken together under load. */
  creates: CreateBatches;
  /**
   * This instance's metrics (its own Prometheus registry, served at /metrics). Features count
   * through the small `Metrics` interface it implements (src/observability/metrics.ts).
   */
  metrics: ServiceMetrics;
}

/** The HTTP application as route modules see it: bodies, params and queries typed by their TypeBox schemas. */
export type RouteApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;
