import type { AppContext } from '../context.js';
import { readFirstSteps } from './first-steps.repo.js';

/** The steps to a first payment, in the order a new operator takes them. */
export const FIRST_STEPS = ['rate', 'merchant', 'terminal', 'executor', 'deposit', 'requisite', 'phone'] as const;
export type FirstStep = (typeof FIRST_STEPS)[number];

/** Each step to a first payment with whether it is done (from the data, not from a checklist someone ticks), and whether all are. */
export async function firstSteps(ctx: AppContext): Promise<{ steps: { step: FirstStep; done: boolean }[]; done: boolean }> {
  const row = await readFirstSteps(ctx.db);
  const steps = FIRST_STEPS.map((step) => ({ step, done: row[step] }));
  return { steps, done: steps.every((s) => s.done) };
}
