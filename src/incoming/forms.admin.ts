import { Type } from 'typebox';
import { actorOf, auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { ParserFormAnswer, ParserFormListAnswer, ParserFormPublishAnswer, ParserFormSuggestAnswer } from './forms.answers.js';
import { FORM_ERRORS, NewFormBody, SuggestQuery } from './forms.schemas.js';
import * as forms from './forms.service.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const VersionParams = Type.Object({ id: Type.String({ format: 'uuid' }), version: Type.Integer({ minimum: 1 }) });

/**
 * Message forms support teaches from a message the parsers could not read (docs/devices.md
 * "Teaching a new message form"). Support may teach and put a form live: it is who links the
 * messages a form would have read, and a form goes live only when the check finds nothing it
 * would read wrongly.
 */
export async function parserFormAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/parser-forms',
    {
      config: { access: 'support' },
      schema: { documentedResponse: { 200: ParserFormListAnswer }, tags, summary: 'Message forms people taught, newest first, with their versions' },
    },
    async () => ({ forms: await forms.listForms(ctx, null) }),
  );

  app.get(
    '/parser-forms/suggest',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: ParserFormSuggestAnswer },
        tags,
        summary: 'What to prefill when teaching a form from a message: its text, bank, currency and the spans found (amount, card, times)',
        querystring: SuggestQuery,
        errors: { NOT_FOUND: 'No such message or notification (with a text)' },
      },
    },
    async (request) => forms.suggestForm(ctx, request.query.kind, request.query.id, null),
  );

  app.get(
    '/parser-forms/export',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: Type.String({ description: 'tab-separated corpus lines, one section per bank' }) },
        tags,
        summary: 'The live forms’ samples as corpus lines (src/incoming/parsers/corpus/<bank>.tsv), for a release to learn them',
        produces: ['text/tab-separated-values'],
      },
    },
    async (_request, reply) =>
      reply
        .header('content-type', 'text/tab-separated-values; charset=utf-8')
        .header('content-disposition', 'attachment; filename="taught-forms.tsv"')
        .send(await forms.exportForms(ctx)),
  );

  app.post(
    '/parser-forms',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 201: ParserFormAnswer },
        tags,
        summary: 'Teach a message form: a draft (version 1) until it is put live',
        body: NewFormBody,
        errors: FORM_ERRORS,
      },
    },
    async (request, reply) => {
      const { form, versions } = await forms.createForm(ctx, { name: actorOf(request).name, executorId: null }, request.body, auditFor(request));
      return reply.status(201).send(forms.toForm(form, versions));
    },
  );

  app.post(
    '/parser-forms/:id/versions',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 201: ParserFormAnswer },
        tags,
        summary: 'A new draft version of a form (its template changed); the live version stays live until this one is put live',
        params: IdParams,
        body: Type.Object({ template: NewFormBody.properties.template, sample: NewFormBody.properties.sample }),
        errors: { ...FORM_ERRORS, NOT_FOUND: 'No form with this id' },
      },
    },
    async (request, reply) => {
      const { form, versions } = await forms.reviseForm(
        ctx,
        { name: actorOf(request).name, executorId: null },
        request.params.id,
        request.body,
        auditFor(request),
      );
      return reply.status(201).send(forms.toForm(form, versions));
    },
  );

  app.post(
    '/parser-forms/:id/versions/:version/publish',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: ParserFormPublishAnswer },
        tags,
        summary: 'Put a draft version live after checking it against every corpus line and every message kept in the last 30 days',
        description:
          'Refused (`422 FORM_001`, `data.offending` lists each line: its source, text, why, and what the form reads in it) when the form would credit a negative corpus line, read a positive one otherwise than it says, change what a kept message was read as, or read a message otherwise than the payment it completed. Otherwise the form’s previous live version is retired and this one applies on every instance from the next message.',
        params: VersionParams,
        errors: {
          NOT_FOUND: 'No form with this id, or no such version',
          CONFLICT: 'The version is not a draft (`data.status`)',
          FORM_REFUSED: 'The check found lines the form would read wrongly (`data.offending`)',
        },
      },
    },
    async (request) => {
      const { form, versions, check } = await forms.publishForm(
        ctx,
        { name: actorOf(request).name, executorId: null },
        request.params.id,
        request.params.version,
        auditFor(request),
      );
      return { form: forms.toForm(form, versions), check };
    },
  );

  app.post(
    '/parser-forms/:id/retire',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: ParserFormAnswer },
        tags,
        summary: 'Stop applying a form: its live version is retired (on every instance from the next message)',
        params: IdParams,
        errors: { NOT_FOUND: 'No form with this id', CONFLICT: 'The form has no live version' },
      },
    },
    async (request) => {
      const { form, versions } = await forms.retireForm(ctx, request.params.id, auditFor(request));
      return forms.toForm(form, versions);
    },
  );
}
