/** Operator staff roles, weakest first: each may do what the ones before it may. */
export const STAFF_ROLES = ['support', 'finance', 'admin'] as const;
export type StaffRole = (typeof STAFF_ROLES)[number];
/** Every role a person may have: staff, or a cabinet's executor or merchant. */
export const ROLES = [...STAFF_ROLES, 'executor', 'merchant'] as const;
export type Role = (typeof ROLES)[number];

/** A person signed in through a session cookie. */
export interface PersonActor {
  kind: 'user';
  id: string;
  email: string;
  role: Role;
  /** The executor or merchant a cabinet sign-in acts for. */
  executorId: string | null;
  merchantId: string | null;
  sessionId: string;
  csrfToken: string;
  /** Two-factor is enrolled. */
  twoFactor: boolean;
  /** The operator requires two-factor of this role. */
  twoFactorRequired: boolean;
  /** The password was generated for the person: nothing but choosing a new one until they do. */
  mustChangePassword: boolean;
  /** When the person last proved it was them (sign-in with a code, or POST /auth/v1/confirm). */
  confirmedAt: Date | null;
}

/**
 * Who acts on the operator side: the bearer ADMIN_TOKEN (machines and the CLI, full access) or a
 * signed-in person. Resolved once at the edge (src/http/access.ts) as `request.actor`.
 */
export type OperatorActor = { kind: 'token' } | PersonActor;

/** An executor's apps, by the executor's bearer token (src/http/executor-auth.ts). */
export interface ExecutorActor {
  kind: 'executor';
  id: string;
  name: string;
}

/** An executor's phone, by its device token (src/http/device-auth.ts). */
export interface DeviceActor {
  kind: 'device';
  id: string;
  executorId: string;
}

/**
 * Whoever acts: the operator's token, a signed-in person (staff, an executor's or a merchant's),
 * an executor's apps, or a phone. The audit log names each one the same way (`actorName`).
 */
export type Actor = OperatorActor | ExecutorActor | DeviceActor;

/** How an actor is named in the audit log and on decisions: "token", the person's email, `executor:<name>`, `device:<id>`. */
export function actorName(actor: Actor | undefined): string {
  if (!actor) return 'anonymous';
  switch (actor.kind) {
    case 'token':
      return 'token';
    case 'user':
      return actor.email;
    case 'executor':
      return `executor:${actor.name}`;
    case 'device':
      return `device:${actor.id}`;
  }
}

/** Which staff role a route needs, weakest first; each role may do what those before it may. */
const RANK: Record<StaffRole, number> = { support: 1, finance: 2, admin: 3 };

/** Whether the actor's role is at least `needed` (the bearer token is every role). */
export function hasRole(actor: OperatorActor, needed: StaffRole): boolean {
  if (actor.kind === 'token') return true;
  const rank = RANK[actor.role as StaffRole];
  return rank !== undefined && rank >= RANK[needed];
}
