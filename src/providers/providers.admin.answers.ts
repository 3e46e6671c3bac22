import { Type } from 'typebox';

/**
 * What the routes of providers.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** POST /admin/v1/providers */
export const AdminCreateProviderAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  kind: Type.String(),
  callback_url: Type.String(),
});

/** A provider as the operator sees it, with the state of its circuit breaker. */
const AdminProvider = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  kind: Type.String(),
  base_url: Type.String(),
  is_active: Type.Boolean(),
  callback_url: Type.String(),
  breaker: Type.Object({
    failures: Type.Number(),
    open_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  }),
  created_at: Type.String({ format: 'date-time' }),
});

/** GET /admin/v1/providers */
export const AdminListProvidersAnswer = Type.Object({
  providers: Type.Array(AdminProvider),
});

/** PATCH /admin/v1/providers/{id} */
export const AdminUpdateProviderAnswer = AdminProvider;

/** GET /admin/v1/terminals/{id}/routes */
export const AdminListTerminalRoutesAnswer = Type.Array(
  Type.Object({
    provider_id: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()])),
    methods: Type.Optional(Type.Array(Type.String())),
    executors: Type.Optional(Type.Boolean()),
  }),
);

/** PUT /admin/v1/terminals/{id}/routes */
export const AdminSetTerminalRoutesAnswer = Type.Array(
  Type.Object({
    executors: Type.Optional(Type.Boolean()),
    provider_id: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()])),
    methods: Type.Optional(Type.Array(Type.String())),
  }),
);
