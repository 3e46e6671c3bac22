import { Type } from 'typebox';

/**
 * What the routes of ledger.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** GET /admin/v1/ledger/check */
export const AdminCheckLedgerAnswer = Type.Object({
  ok: Type.Boolean(),
  problems: Type.Array(
    Type.Object({
      invariant: Type.String(),
      detail: Type.String(),
    }),
  ),
});
