import { Type } from 'typebox';

/** Request bodies of the taught-form routes (operator and executor alike). */

export const NewFormBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  bank: Type.String({ minLength: 1, maxLength: 50, description: 'the bank’s directory code' }),
  currency: Type.String({ description: 'RUB, KZT or TJS: the currency of the amounts the form reads' }),
  template: Type.String({
    minLength: 1,
    maxLength: 2000,
    description: 'the message with its changing parts as holes: {amount} {card} {payer} {balance} {time} {date} {any}',
  }),
  sample: Type.String({ minLength: 1, maxLength: 2000, description: 'the message the form is taught from: the template must read it' }),
  source: Type.Optional(
    Type.Object({
      kind: Type.Union([Type.Literal('device_message'), Type.Literal('notification')]),
      id: Type.String({ format: 'uuid' }),
    }),
  ),
});

export const SuggestQuery = Type.Object({
  kind: Type.Union([Type.Literal('device_message'), Type.Literal('notification')]),
  id: Type.String(),
});

export const FORM_ERRORS = {
  VALIDATION:
    'Invalid parameters: the message names the field (a template that is not a form — no {amount}, holes that touch, too few words of its own — or that does not read its sample)',
  NOT_FOUND: 'The message or notification named as the source is not found',
};
