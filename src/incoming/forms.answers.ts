import { Type } from 'typebox';

/**
 * What the taught-form routes (forms.admin.ts, forms.executor.ts) answer on success, as the OpenAPI
 * document shows them (documentation only; test/answer-checks.ts checks every answer against them).
 */

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

const FormVersion = Type.Object({
  version: Type.Integer(),
  template: Type.String({ description: 'literal text with holes {amount} {card} {payer} {balance} {time} {date} {any}' }),
  sample: Type.String({ description: 'the message the version was taught from' }),
  status: Type.Union([Type.Literal('draft'), Type.Literal('live'), Type.Literal('retired')]),
  source_kind: Nullable(Type.String()),
  source_id: Nullable(Type.String({ format: 'uuid' })),
  created_by: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  published_by: Nullable(Type.String()),
  published_at: Nullable(Type.String({ format: 'date-time' })),
  retired_at: Nullable(Type.String({ format: 'date-time' })),
});

/** A taught message form with its versions. */
export const ParserFormAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  bank: Type.String(),
  currency: Type.String(),
  status: Type.Union([Type.Literal('draft'), Type.Literal('live'), Type.Literal('retired')]),
  live_version: Nullable(Type.Integer()),
  proposed_by_executor: Nullable(Type.String({ format: 'uuid' })),
  created_by: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  versions: Type.Array(FormVersion),
});

export const ParserFormListAnswer = Type.Object({ forms: Type.Array(ParserFormAnswer) });

const CheckedLine = Type.Object({
  source: Type.String({ description: 'corpus/<bank>.tsv:<line>, or the kept message or notification' }),
  text: Type.String(),
  reason: Type.String(),
  reads: Type.Optional(Type.Object({ amount: Type.String(), digits: Type.Optional(Type.String()) })),
});

/** What a form went live with: the form, and what its check read. */
export const ParserFormPublishAnswer = Type.Object({
  form: ParserFormAnswer,
  check: Type.Object({
    ok: Type.Boolean(),
    corpus_lines: Type.Integer(),
    messages: Type.Integer(),
    offending: Type.Array(CheckedLine),
    reads_newly: Type.Array(CheckedLine),
  }),
});

/** What the console prefills when a person teaches a form from a message. */
export const ParserFormSuggestAnswer = Type.Object({
  text: Type.String(),
  bank: Nullable(Type.String()),
  currency: Type.String(),
  marks: Type.Array(
    Type.Object({
      hole: Type.String(),
      start: Type.Integer({ description: 'offset in text (UTF-16 code units)' }),
      end: Type.Integer(),
    }),
  ),
});
