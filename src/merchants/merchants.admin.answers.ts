import { Type } from 'typebox';
import { AdminTerminal } from '../terminals/terminals.schemas.js';

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

/** A terminal as the operator's merchant views list it: the operator's Terminal, without the key it shows only once. */
const MerchantTerminal = Type.Omit(AdminTerminal, ['api_key']);

/** GET /admin/v1/merchants/{id} */
export const AdminGetMerchantAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  terminals: Type.Array(MerchantTerminal),
});

/** POST /admin/v1/merchants/{id}/secret-key/rotate */
export const AdminRotateMerchantSecretKeyAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  secret_key: Type.String(),
  previous_valid_until: Type.String({ format: 'date-time' }),
});

/** GET /admin/v1/merchants/{id}/terminals */
export const AdminListMerchantTerminalsAnswer = Type.Object({
  terminals: Type.Array(MerchantTerminal),
});
