import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { FIRST_STEPS, firstSteps } from './first-steps.service.js';

const tags = ['operator'];

const FirstStepsAnswer = Type.Object({
  steps: Type.Array(
    Type.Object({
      step: Type.Unsafe<string>({ type: 'string', enum: [...FIRST_STEPS] }),
      done: Type.Boolean(),
    }),
  ),
  done: Type.Boolean({ description: 'every step is done' }),
});

/** `GET /admin/v1/first-steps`: what a first payment still needs, for the console's greeting on an empty install. */
export async function firstStepsAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/first-steps',
    {
      config: { access: 'support' },
      schema: {
        tags,
        summary: 'The steps to a first payment and which are done: a rate, a merchant, a terminal, an executor with a deposit and a requisite, a phone',
        response: { 200: FirstStepsAnswer },
      },
    },
    async () => firstSteps(ctx),
  );
}
