import { Type } from 'typebox';

/**
 * What the routes of rates.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** GET /admin/v1/rates */
export const AdminListRatesAnswer = Type.Object({
  rates: Type.Array(
    Type.Object({
      currency: Type.String(),
      rate: Type.Number(),
      updated_at: Type.String({ format: 'date-time' }),
    }),
  ),
});

/** PUT /admin/v1/rates/{currency} */
export const AdminSetRateAnswer = Type.Object({
  currency: Type.String(),
  rate: Type.Number(),
  updated_at: Type.String({ format: 'date-time' }),
});
