import { actorOf, auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { ParserFormAnswer, ParserFormListAnswer, ParserFormSuggestAnswer } from './forms.answers.js';
import { FORM_ERRORS, NewFormBody, SuggestQuery } from './forms.schemas.js';
import * as forms from './forms.service.js';

const tags = ['executor'];

/**
 * An executor proposes a message form from one of its own messages (the cabinet): a draft that
 * support reviews and puts live. An executor never puts a form live — a form completes payments
 * of every executor — and sees only its own proposals.
 */
export async function parserFormExecutorRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/parser-forms',
    { schema: { documentedResponse: { 200: ParserFormListAnswer }, tags, summary: 'The message forms you proposed, with their status' } },
    async (request) => ({ forms: await forms.listForms(ctx, request.executor!.id) }),
  );

  app.get(
    '/parser-forms/suggest',
    {
      schema: {
        documentedResponse: { 200: ParserFormSuggestAnswer },
        tags,
        summary: 'What to prefill when proposing a form from one of your messages',
        querystring: SuggestQuery,
        errors: { NOT_FOUND: 'No such message among yours' },
      },
    },
    async (request) => forms.suggestForm(ctx, request.query.kind, request.query.id, request.executor!.id),
  );

  app.post(
    '/parser-forms',
    {
      schema: {
        documentedResponse: { 201: ParserFormAnswer },
        tags,
        summary: 'Propose a message form from one of your messages: a draft that support reviews and puts live',
        body: NewFormBody,
        errors: { ...FORM_ERRORS, NOT_FOUND: 'The message named as the source is not one of yours' },
      },
    },
    async (request, reply) => {
      const executor = request.executor!;
      const { form, versions } = await forms.createForm(ctx, { name: actorOf(request).name, executorId: executor.id }, request.body, auditFor(request));
      return reply.status(201).send(forms.toForm(form, versions));
    },
  );
}
