import { Type } from 'typebox';
import { EffectiveRate, RateSetting } from '../rates/rates.admin.answers.js';

/**
 * What the routes of terminals.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** A success with nothing to answer (204). */
export const NoContent = Type.Null({ description: 'Done; the answer has no body' });

/** GET /admin/v1/terminals/{id}/statement */
export const AdminGetTerminalStatementAnswer = Type.Object({
  entries: Type.Array(
    Type.Object({
      id: Type.String(),
      created_at: Type.String({ format: 'date-time' }),
      kind: Type.String(),
      account: Type.String(),
      amount: Type.String(),
      balance_after: Type.String(),
      ref_id: Type.Unknown(),
      memo: Type.Union([Type.String(), Type.Null()]),
      about: Type.Union(
        [
          Type.Object({
            type: Type.String({ description: 'payment, payout or withdrawal' }),
            ext_id: Type.Union([Type.String(), Type.Null()]),
            amount: Type.String({ description: 'Its amount, in its currency (a decimal string)' }),
            currency: Type.String(),
            status: Type.String(),
          }),
          Type.Null(),
        ],
        { description: 'What the posting is about (its ref_id), when it is this owner’s own: the names a person knows it by' },
      ),
    }),
  ),
  total: Type.Number(),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** POST /admin/v1/terminals/{id}/api-key/rotate */
export const AdminRotateTerminalApiKeyAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  api_key: Type.String(),
  previous_valid_until: Type.String({ format: 'date-time' }),
});

/** POST /admin/v1/terminals/{id}/adjustments */
export const AdminCreateTerminalAdjustmentAnswer = Type.Object({
  balance: Type.Number(),
  balance_frozen: Type.Number(),
});

/** GET /admin/v1/terminals/{id}/rates */
export const AdminListTerminalRatesAnswer = Type.Object({
  rates: Type.Array(RateSetting),
  effective: Type.Array(EffectiveRate),
});
