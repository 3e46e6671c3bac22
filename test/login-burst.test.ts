import * as argon2 from '@node-rs/argon2';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningService } from '../src/instance.js';
import { adminOk, startTestService, type TestService } from './helpers.js';

// Every password check the service makes goes through argon2's verify: counted here, across both instances
// (they run in this process), so a burst shows how many guesses were actually tried.
vi.mock('@node-rs/argon2', async (original) => {
  const real = await original<typeof import('@node-rs/argon2')>();
  return { ...real, verify: vi.fn(real.verify) };
});
const verify = vi.mocked(argon2.verify);

// The sign-in lock under a burst (issue 30, item 7): docs/operator.md says the tenth failure in an hour locks the
// email. The attempt is counted in PostgreSQL before the password is checked, so a burst over two instances
// gets at most ten checks, and the right password is refused while the lock holds.
let service: TestService;
let other: RunningService;

beforeAll(async () => {
  // Per-address limits are a separate guard (test/people.test.ts); here the per-email lock alone is on trial.
  service = await startTestService({ LOGIN_ATTEMPTS_PER_MINUTE: '100000' });
  other = await service.startAnother();
});
afterAll(async () => service?.close());

const PASSWORD = 'correct horse battery';

function login(app: FastifyInstance, email: string, password: string) {
  return app.inject({ method: 'POST', url: '/auth/v1/login', payload: { email, password } });
}

async function burst(email: string, count: number): Promise<{ checks: number; statuses: Record<number, number> }> {
  verify.mockClear();
  const answers = await Promise.all(Array.from({ length: count }, (_, i) => login(i % 2 === 0 ? service.app : other.app, email, `wrong guess ${i}`)));
  const statuses: Record<number, number> = {};
  for (const answer of answers) statuses[answer.statusCode] = (statuses[answer.statusCode] ?? 0) + 1;
  return { checks: verify.mock.calls.length, statuses };
}

describe('a burst of wrong sign-ins for one email, over two instances on one database', () => {
  it.each([30, 100])('%i at once: at most ten passwords are checked, the rest are refused 429, and the right password is then refused', async (count) => {
    const user = await adminOk<{ email: string }>(service.app, 'POST', '/users', { email: `burst.${count}@kassir.test`, role: 'support', password: PASSWORD });
    const { checks, statuses } = await burst(user.email, count);
    // Exactly the ten attempts that were counted before the lock were checked, each answered 401.
    expect(checks).toBe(10);
    expect(statuses).toEqual({ 401: 10, 429: count - 10 });

    verify.mockClear();
    const locked = await login(other.app, user.email, PASSWORD);
    expect([locked.statusCode, locked.json().error]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(800);
    expect(verify).not.toHaveBeenCalled();
  });

  it('an email no one has is locked the same way', async () => {
    const { checks, statuses } = await burst('nobody.burst@kassir.test', 30);
    expect(checks).toBe(10);
    expect(statuses).toEqual({ 401: 10, 429: 20 });
  });
});
