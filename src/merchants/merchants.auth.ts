import { pipeline } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { prepared } from '../db/pool.js';
import { hashToken } from '../lib/crypto.js';
import { DomainError } from '../errors.js';
import { BodySigner } from '../http/signature.js';
import { isMultipart } from '../receipts/upload.js';

/** Who is calling the merchant API: the terminal of the `X-Identity` key and its merchant. */
export interface MerchantIdentity {
  merchantId: string;
  terminalId: string;
  terminalName: string;
  terminalCurrency: string;
  terminalActive: boolean;
  payinRate: string;
  secrets: string[];
  /** The identity's row as read, with the columns the route asked for (route config identityColumns). */
  extras: Record<string, unknown>;
}

interface IdentityRow {
  merchant_id: string;
  terminal_id: string;
  terminal_name: string;
  currency: string;
  is_active: boolean;
  payin_rate: string;
  secrets: string[];
  /** When the key or one of the secrets expires (null: never); the identity is not kept past it. */
  valid_until: Date | null;
  [extra: string]: unknown;
}

const IDENTITY_SQL = `SELECT k.merchant_id, k.terminal_id, t.name AS terminal_name, t.currency, t.is_active, t.payin_rate,
            ARRAY(SELECT s.secret_enc FROM merchant_secrets s
                   WHERE s.merchant_id = k.merchant_id AND (s.expires_at IS NULL OR s.expires_at > now())) AS secrets,
            least(k.expires_at, (SELECT min(s.expires_at) FROM merchant_secrets s
                                  WHERE s.merchant_id = k.merchant_id AND s.expires_at > now())) AS valid_until
       FROM terminal_api_keys k JOIN terminals t ON t.id = k.terminal_id
      WHERE k.key_hash = $1 AND (k.expires_at IS NULL OR k.expires_at > now())`;

/** The identity query with a route's extra columns over `i.terminal_id`; one text per route. */
const identitySql = new Map<string, string>();
function identityQuery(columns: string | undefined): string {
  if (!columns) return IDENTITY_SQL;
  let text = identitySql.get(columns);
  if (!text) {
    text = `SELECT i.*, ${columns} FROM (${IDENTITY_SQL}) i`;
    identitySql.set(columns, text);
  }
  return text;
}

/**
 * Finds the terminal of an API key with the merchant's currently valid (sealed) secrets, and the
 * extra `columns` of it a route needs (one round trip for both); kept in memory between requests
 * (ctx.identities, see IdentityCache for when it is not).
 */
async function findIdentity(ctx: AppContext, apiKey: string, columns: string | undefined): Promise<MerchantIdentity | undefined> {
  const keyHash = hashToken(apiKey);
  return ctx.identities.get(`${keyHash.toString('base64')} ${columns ?? ''}`, async () => {
    const { rows } = await ctx.db.query<IdentityRow>(prepared(identityQuery(columns), [keyHash]));
    const row = rows[0];
    if (!row) return undefined;
    const identity: MerchantIdentity = {
      merchantId: row.merchant_id,
      terminalId: row.terminal_id,
      terminalName: row.terminal_name,
      terminalCurrency: row.currency,
      terminalActive: row.is_active,
      payinRate: row.payin_rate,
      secrets: row.secrets.map((sealed) => ctx.box.open(sealed)),
      extras: row,
    };
    return { value: identity, validUntil: row.valid_until };
  });
}

/**
 * Installs the merchant API's authentication on a plugin scope (spec "Authentication";
 * DESIGN.md decisions 1–3): `X-Identity` names the terminal, `X-Signature` is checked over the raw
 * body bytes (a multipart body as it streams in), in constant time; only then is the body's JSON
 * looked at.
 */
export function merchantAuth(app: FastifyInstance, ctx: AppContext): void {
  // The spec's "Invalid parameters" is PAY_002 on every merchant route that names no code of its own.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, invalidCode: route.config?.invalidCode ?? 'PAY_002' };
  });
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const apiKey = request.headers['x-identity'];
    const signature = request.headers['x-signature'];
    if (typeof apiKey !== 'string' || apiKey === '' || typeof signature !== 'string' || signature === '') {
      throw new DomainError('AUTH_001', 'Send the X-Identity (API key) and X-Signature headers');
    }
    const identity = await findIdentity(ctx, apiKey, request.routeOptions.config.identityColumns);
    if (!identity) throw new DomainError('AUTH_002');
    request.merchant = identity;
    request.signer = new BodySigner(identity.secrets, request.method, ctx.config.publicBaseUrl + request.url);
  });

  // A JSON body is signed as a whole by the JSON parser (src/http/json.ts); a multipart body is
  // signed while it streams, through this tap, to the upload route that reads it.
  app.addHook('preParsing', async (request, _reply: FastifyReply, payload) => {
    if (!request.signer || !isMultipart(request)) return payload;
    const tap = request.signer.tap();
    // pipeline, not pipe: an aborted upload must fail the request instead of hanging it.
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
    if (!request.signer || !request.signer.matches(signature)) throw new DomainError('AUTH_002');
    if (!request.merchant?.terminalActive) throw new DomainError('AUTH_003');
  });
}
