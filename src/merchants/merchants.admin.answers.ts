import { Type } from 'typebox';

/**
 * What the routes of merchants.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** POST /admin/v1/merchants */
export const AdminCreateMerchantAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  secret_key: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});

/** GET /admin/v1/merchants */
export const AdminListMerchantsAnswer = Type.Object({
  merchants: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      name: Type.String(),
      created_at: Type.String({ format: 'date-time' }),
      terminals: Type.Number(),
    }),
  ),
});

/** GET /admin/v1/merchants/{id} */
export const AdminGetMerchantAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  terminals: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      name: Type.String(),
      balance: Type.Number(),
      balance_frozen: Type.Number(),
      withdrawal_fee: Type.Number(),
      currency: Type.String(),
      is_active: Type.Boolean(),
      merchant_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
      payment_currency: Type.String(),
      payin_rate: Type.Number(),
      payout_rate: Type.Number(),
      created_at: Type.String({ format: 'date-time' }),
      return_url: Type.Unknown(),
    }),
  ),
});

/** POST /admin/v1/merchants/{id}/secret-key/rotate */
export const AdminRotateMerchantSecretKeyAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  secret_key: Type.String(),
  previous_valid_until: Type.String({ format: 'date-time' }),
});

/** GET /admin/v1/merchants/{id}/terminals */
export const AdminListMerchantTerminalsAnswer = Type.Object({
  terminals: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      name: Type.String(),
      balance: Type.Number(),
      balance_frozen: Type.Number(),
      withdrawal_fee: Type.Number(),
      currency: Type.String(),
      is_active: Type.Boolean(),
      merchant_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
      payment_currency: Type.String(),
      payin_rate: Type.Number(),
      payout_rate: Type.Number(),
      created_at: Type.String({ format: 'date-time' }),
      return_url: Type.Unknown(),
    }),
  ),
});
