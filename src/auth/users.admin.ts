import { Type } from 'typebox';
import { auditFor, listAudit } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { parseListQuery } from '../lib/pagination.js';
import * as auth from './auth.service.js';
import {
  AdminCreateExecutorSignInAnswer,
  AdminCreateMerchantSignInAnswer,
  AdminCreateUserAnswer,
  AdminGetUserAnswer,
  AdminListAuditEntriesAnswer,
  AdminListTwoFactorRolesAnswer,
  AdminListUsersAnswer,
  AdminResetUserPasswordAnswer,
  AdminSetTwoFactorRolesAnswer,
  AdminUpdateUserAnswer,
  NoContent,
} from './users.admin.answers.js';
import { ROLES, type Role, STAFF_ROLES } from './users.repo.js';

const tags = ['operator', 'people'];
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const StaffRoleSchema = Type.Union(
  STAFF_ROLES.map((role) => Type.Literal(role)),
  {
    description:
      'support reads everything and decides disputes and notifications; finance also completes payouts and withdrawals and adjusts balances; admin does everything',
  },
);
const CreateUserBody = Type.Object({
  email: Type.String({ minLength: 3, maxLength: 320 }),
  role: StaffRoleSchema,
  password: Type.Optional(Type.String({ maxLength: 200, description: 'at least 10 characters; omit to have one generated (shown once)' })),
});
const SignInBody = Type.Object({
  email: Type.String({ minLength: 3, maxLength: 320 }),
  password: Type.Optional(Type.String({ maxLength: 200, description: 'omit to have one generated (shown once)' })),
});
const UpdateUserBody = Type.Object({
  role: Type.Optional(StaffRoleSchema),
  is_active: Type.Optional(Type.Boolean()),
  reason: Type.Optional(Type.String({ maxLength: 500, description: 'why, kept in the audit log (the console asks it when switching a sign-in off)' })),
});
const UsersQuery = Type.Object({
  role: Type.Optional(Type.Union(ROLES.map((role) => Type.Literal(role)))),
  q: Type.Optional(Type.String({ maxLength: 320, description: 'part of the email' })),
  limit: Type.Optional(Type.String()),
  offset: Type.Optional(Type.String()),
});
const TwoFactorRolesBody = Type.Object({ roles: Type.Array(Type.Union(ROLES.map((role) => Type.Literal(role))), { maxItems: ROLES.length }) });
/** What creating a sign-in answers besides the usual. */
const SIGN_IN_ERRORS = {
  CONFLICT: 'A sign-in with this email already exists (`data.email`)',
  VALIDATION: 'Invalid parameters: the message names the field (not an email address, a password shorter than 10 characters)',
};
const AuditQuery = Type.Object({
  actor: Type.Optional(Type.String({ maxLength: 320 })),
  action: Type.Optional(Type.String({ maxLength: 100, description: 'an action, or a prefix ending in "." such as "dispute."' })),
  object_type: Type.Optional(Type.String({ maxLength: 50 })),
  object_id: Type.Optional(Type.String({ maxLength: 100 })),
  from: Type.Optional(Type.String({ format: 'date-time' })),
  to: Type.Optional(Type.String({ format: 'date-time' })),
  limit: Type.Optional(Type.String()),
  offset: Type.Optional(Type.String()),
});

/** Operator API for people: staff sign-ins, executors' and merchants' sign-ins, two-factor policy, the audit log. */
export async function userAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/users',
    {
      schema: {
        documentedResponse: { 201: AdminCreateUserAnswer },
        tags,
        summary: 'Create a staff sign-in; a generated password is shown once',
        body: CreateUserBody,
        errors: SIGN_IN_ERRORS,
      },
      config: { secret: true, access: 'admin', confirm: true },
    },
    async (request, reply) => {
      const { user, password } = await auth.createUser(ctx, request.body, auditFor(request));
      return reply.status(201).send({ id: user.id, email: user.email, role: user.role, password });
    },
  );

  app.get(
    '/users',
    {
      schema: {
        documentedResponse: { 200: AdminListUsersAnswer },
        tags,
        summary: 'List sign-ins, newest first, by role or part of the email',
        querystring: UsersQuery,
      },
      config: { access: 'admin' },
    },
    async (request) => {
      const { limit, offset } = parseListQuery(request.query, 'VALIDATION');
      const { rows, total } = await auth.listUsers(ctx, { role: request.query.role as Role | undefined, q: request.query.q, limit, offset });
      return { users: rows.map(auth.toUser), total, limit, offset };
    },
  );

  app.get(
    '/users/:id',
    { schema: { documentedResponse: { 200: AdminGetUserAnswer }, tags, summary: 'Get a sign-in', params: IdParams }, config: { access: 'admin' } },
    async (request) => auth.toUser(await auth.getUser(ctx, request.params.id)),
  );

  app.patch(
    '/users/:id',
    {
      schema: {
        documentedResponse: { 200: AdminUpdateUserAnswer },
        tags,
        summary: "Change a user's role or switch the sign-in off (its sessions end)",
        params: IdParams,
        body: UpdateUserBody,
        errors: { CONFLICT: 'You cannot switch off or demote yourself; or the role of an executor’s or merchant’s sign-in cannot be changed' },
      },
      config: { access: 'admin' },
    },
    async (request) => {
      const actor = request.actor?.kind === 'user' ? request.actor : {};
      const { reason, ...patch } = request.body;
      return auth.toUser(await auth.updateUser(ctx, actor, request.params.id, patch, reason, auditFor(request)));
    },
  );

  app.post(
    '/users/:id/password',
    {
      schema: {
        documentedResponse: { 200: AdminResetUserPasswordAnswer },
        tags,
        summary: 'Reset a password: a new one is generated and shown once; sessions end',
        params: IdParams,
      },
      config: { secret: true, access: 'admin', confirm: true },
    },
    async (request) => {
      const { user, password } = await auth.resetPassword(ctx, request.params.id, auditFor(request));
      // Whose password it is travels with it, so a screen can never show it under another person.
      return { id: user.id, email: user.email, password };
    },
  );

  app.post(
    '/users/:id/two-factor/reset',
    {
      schema: { documentedResponse: { 204: NoContent }, tags, summary: 'Clear a lost second factor; the user enrols again', params: IdParams },
      config: { access: 'admin', confirm: true },
    },
    async (request, reply) => {
      await auth.resetTwoFactor(ctx, request.params.id, auditFor(request));
      return reply.status(204).send();
    },
  );

  app.get(
    '/two-factor-roles',
    {
      schema: { documentedResponse: { 200: AdminListTwoFactorRolesAnswer }, tags, summary: 'Roles that must sign in with two-factor' },
      config: { access: 'support' },
    },
    async () => ({
      roles: await auth.twoFactorRoles(ctx),
    }),
  );

  app.put(
    '/two-factor-roles',
    {
      schema: { documentedResponse: { 200: AdminSetTwoFactorRolesAnswer }, tags, summary: 'Require two-factor of these roles', body: TwoFactorRolesBody },
      config: { access: 'admin', confirm: true },
    },
    async (request) => ({ roles: await auth.setTwoFactorRoles(ctx, request.body.roles as Role[], auditFor(request)) }),
  );

  // Executors and merchants get sign-ins of their own, to their cabinets (DESIGN.md: same answer).
  app.post(
    '/executors/:id/login',
    {
      schema: {
        documentedResponse: { 201: AdminCreateExecutorSignInAnswer },
        tags,
        summary: "Create the executor's sign-in to the cabinet",
        params: IdParams,
        body: SignInBody,
        errors: SIGN_IN_ERRORS,
      },
      config: { secret: true, access: 'admin', confirm: true },
    },
    async (request, reply) => {
      const { user, password } = await auth.createUser(ctx, { ...request.body, role: 'executor', executorId: request.params.id }, auditFor(request));
      return reply.status(201).send({ id: user.id, email: user.email, role: user.role, password });
    },
  );

  app.post(
    '/merchants/:id/users',
    {
      schema: {
        documentedResponse: { 201: AdminCreateMerchantSignInAnswer },
        tags,
        summary: "Create a sign-in to the merchant's cabinet",
        params: IdParams,
        body: SignInBody,
        errors: SIGN_IN_ERRORS,
      },
      config: { secret: true, access: 'admin', confirm: true },
    },
    async (request, reply) => {
      const { user, password } = await auth.createUser(ctx, { ...request.body, role: 'merchant', merchantId: request.params.id }, auditFor(request));
      return reply.status(201).send({ id: user.id, email: user.email, role: user.role, password });
    },
  );

  app.get(
    '/audit',
    {
      schema: { documentedResponse: { 200: AdminListAuditEntriesAnswer }, tags, summary: 'The audit log, newest first', querystring: AuditQuery },
      config: { access: 'admin' },
    },
    async (request) => {
      const { limit, offset } = parseListQuery(request.query, 'VALIDATION');
      const q = request.query;
      const { entries, total } = await listAudit(ctx.db, {
        actor: q.actor,
        action: q.action,
        objectType: q.object_type,
        objectId: q.object_id,
        from: q.from ? new Date(q.from) : undefined,
        to: q.to ? new Date(q.to) : undefined,
        limit,
        offset,
      });
      return { entries, total, limit, offset };
    },
  );
}
