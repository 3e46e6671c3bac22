import { Type } from 'typebox';

/**
 * What the routes of auth.routes.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** A success with nothing to answer (204). */
export const NoContent = Type.Null({ description: 'Done; the answer has no body' });

/** POST /auth/v1/login */
export const SignInAnswer = Type.Object({
  user: Type.Object({
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    role: Type.String(),
  }),
  csrf_token: Type.String(),
  must_change_password: Type.Boolean(),
});

/** GET /auth/v1/me */
export const GetMeAnswer = Type.Object({
  user: Type.Object({
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    role: Type.String(),
    executor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    merchant_id: Type.Unknown(),
  }),
  two_factor: Type.Boolean(),
  two_factor_required: Type.Boolean(),
  must_change_password: Type.Boolean(),
  confirmed_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  csrf_token: Type.String(),
});

/** POST /auth/v1/confirm */
export const ConfirmIdentityAnswer = Type.Object({
  confirmed_until: Type.String({ format: 'date-time' }),
});

/** GET /auth/v1/sessions */
export const ListSessionsAnswer = Type.Object({
  sessions: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      current: Type.Boolean(),
      ip: Type.Union([Type.String(), Type.Null()]),
      user_agent: Type.Union([Type.String(), Type.Null()]),
      created_at: Type.String({ format: 'date-time' }),
      last_seen_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      expires_at: Type.String({ format: 'date-time' }),
    }),
  ),
});

/** POST /auth/v1/two-factor/setup */
export const SetupTwoFactorAnswer = Type.Object({
  secret: Type.String(),
  otpauth_url: Type.String(),
  qr_code: Type.String(),
});

/** POST /auth/v1/two-factor/enable */
export const EnableTwoFactorAnswer = Type.Object({
  recovery_codes: Type.Array(Type.String()),
});
