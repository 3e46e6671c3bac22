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
 * signed-in person. Resolved once at the edge (src/http/access.ts); services and the audit log take it.
 */
export type Actor = { kind: 'token' } | PersonActor;

/** How an actor is named in the audit log and on decisions ("token" or the person's email). */
export function actorName(actor: Actor | undefined): string {
  if (!actor) return 'anonymous';
  return actor.kind === 'token' ? 'token' : actor.email;
}

/** Which staff role a route needs, weakest first; each role may do what those before it may. */
const RANK: Record<StaffRole, number> = { support: 1, finance: 2, admin: 3 };

/** Whether the actor's role is at least `needed` (the bearer token is every role). */
export function hasRole(actor: Actor, needed: StaffRole): boolean {
  if (actor.kind === 'token') return true;
  const rank = RANK[actor.role as StaffRole];
  return rank !== undefined && rank >= RANK[needed];
}
