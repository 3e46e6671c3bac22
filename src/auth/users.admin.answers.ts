import { Type } from 'typebox';

/**
 * What the routes of users.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** A success with nothing to answer (204). */
export const NoContent = Type.Null({ description: 'Done; the answer has no body' });

/** POST /admin/v1/users */
export const AdminCreateUserAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  role: Type.String(),
  password: Type.String(),
});

/** GET /admin/v1/users */
export const AdminListUsersAnswer = Type.Object({
  users: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      email: Type.String(),
      role: Type.String(),
      executor_id: Type.Unknown(),
      merchant_id: Type.Unknown(),
      is_active: Type.Boolean(),
      two_factor: Type.Boolean(),
      must_change_password: Type.Boolean(),
      recovery_codes_left: Type.Union([Type.Number(), Type.Null()]),
      created_at: Type.String({ format: 'date-time' }),
    }),
  ),
  total: Type.Number(),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** GET /admin/v1/users/{id} */
export const AdminGetUserAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  role: Type.String(),
  executor_id: Type.Unknown(),
  merchant_id: Type.Unknown(),
  is_active: Type.Boolean(),
  two_factor: Type.Boolean(),
  must_change_password: Type.Boolean(),
  recovery_codes_left: Type.Unknown(),
  created_at: Type.String({ format: 'date-time' }),
});

/** PATCH /admin/v1/users/{id} */
export const AdminUpdateUserAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  role: Type.String(),
  executor_id: Type.Unknown(),
  merchant_id: Type.Unknown(),
  is_active: Type.Boolean(),
  two_factor: Type.Boolean(),
  must_change_password: Type.Boolean(),
  recovery_codes_left: Type.Unknown(),
  created_at: Type.String({ format: 'date-time' }),
});

/** POST /admin/v1/users/{id}/password */
export const AdminResetUserPasswordAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  password: Type.String(),
});

/** GET /admin/v1/two-factor-roles */
export const AdminListTwoFactorRolesAnswer = Type.Object({
  roles: Type.Array(Type.String()),
});

/** PUT /admin/v1/two-factor-roles */
export const AdminSetTwoFactorRolesAnswer = Type.Object({
  roles: Type.Array(Type.String()),
});

/** POST /admin/v1/executors/{id}/login */
export const AdminCreateExecutorSignInAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  role: Type.String(),
  password: Type.String(),
});

/** POST /admin/v1/merchants/{id}/users */
export const AdminCreateMerchantSignInAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  role: Type.String(),
  password: Type.String(),
});

/** GET /admin/v1/audit */
export const AdminListAuditEntriesAnswer = Type.Object({
  entries: Type.Array(
    Type.Object({
      id: Type.Number(),
      actor: Type.String(),
      user_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
      ip: Type.Union([Type.String(), Type.Null()]),
      action: Type.String(),
      object_type: Type.String(),
      object_id: Type.Union([Type.String(), Type.Null()]),
      before: Type.Unknown(),
      after: Type.Unknown(),
      created_at: Type.String({ format: 'date-time' }),
    }),
  ),
  total: Type.Number(),
  limit: Type.Number(),
  offset: Type.Number(),
});
