import { Type } from 'typebox';

/**
 * What the routes of users.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** A success with nothing to answer (204). */
export const NoContent = Type.Null({ description: 'Done; the answer has no body' });

/** A sign-in just created: its one-time password, shown once. */
const NewUserAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  role: Type.String(),
  password: Type.String(),
});

/** A sign-in as the operator sees it. */
const AdminUser = Type.Object({
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
});

/** The roles whose sign-ins must use a second factor. */
const TwoFactorRolesAnswer = Type.Object({
  roles: Type.Array(Type.String()),
});

/** POST /admin/v1/users */
export const AdminCreateUserAnswer = NewUserAnswer;

/** GET /admin/v1/users */
export const AdminListUsersAnswer = Type.Object({
  users: Type.Array(AdminUser),
  total: Type.Number(),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** GET /admin/v1/users/{id} */
export const AdminGetUserAnswer = AdminUser;

/** PATCH /admin/v1/users/{id} */
export const AdminUpdateUserAnswer = AdminUser;

/** POST /admin/v1/users/{id}/password */
export const AdminResetUserPasswordAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  password: Type.String(),
});

/** GET /admin/v1/two-factor-roles */
export const AdminListTwoFactorRolesAnswer = TwoFactorRolesAnswer;

/** PUT /admin/v1/two-factor-roles */
export const AdminSetTwoFactorRolesAnswer = TwoFactorRolesAnswer;

/** POST /admin/v1/executors/{id}/login */
export const AdminCreateExecutorSignInAnswer = NewUserAnswer;

/** POST /admin/v1/merchants/{id}/users */
export const AdminCreateMerchantSignInAnswer = NewUserAnswer;

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
