import { type TSchema, Type } from 'typebox';

/**
 * What the routes of disputes.executor.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

const Nullable = (t: TSchema) => Type.Union([t, Type.Null()]);
const Time = Type.String({ format: 'date-time' });

/** A dispute on one of the executor's payments, as the executor sees it. */
export const ExecutorDispute = Type.Object({
  id: Type.String({ format: 'uuid' }),
  payment_id: Type.String({ format: 'uuid' }),
  status: Type.String({ description: 'awaiting_executor, contested, escalated, approved, rejected or cancelled' }),
  amount: Type.Number({ description: 'what the merchant says the payer paid (the order amount when it names none), in `currency`' }),
  order_amount: Type.Number(),
  currency: Type.String(),
  payer_amount: Type.Number({ description: 'what the payer was asked to send to your requisite, in its currency' }),
  payer_currency: Type.String(),
  requisite: Type.Object({ id: Nullable(Type.String({ format: 'uuid' })), type: Type.String(), value: Type.String(), bank: Nullable(Type.String()) }),
  comment: Nullable(Type.String()),
  receipt: Nullable(
    Type.Object({
      url: Type.String({ description: 'the merchant’s receipt: a stored file to show inline (GET …/receipt), or the merchant’s own link' }),
      content_type: Nullable(Type.String()),
    }),
  ),
  opened_at: Time,
  answer_due_at: Nullable(Time),
  support_due_at: Nullable(Time),
  hold: Type.Number({ description: 'USDT frozen on your deposit while it is open (0 when the deposit could not cover it)' }),
  uncovered: Type.Boolean({ description: 'your deposit could not cover it: your requisites are not handed out until it closes' }),
  answer: Nullable(
    Type.Object({
      kind: Type.String({ description: 'accepted or contested' }),
      amount: Nullable(Type.Number()),
      comment: Nullable(Type.String()),
      file: Type.Boolean(),
      at: Time,
      late: Type.Boolean({ description: 'answered after answer_due_at' }),
    }),
  ),
  timed_out: Nullable(Type.String({ description: 'what the deadline did: approved or escalated' })),
  decided_amount: Nullable(Type.Number()),
  decided_at: Nullable(Time),
  late_money: Type.Array(
    Type.Object(
      { notification_id: Type.String({ format: 'uuid' }), amount: Type.Number(), text: Nullable(Type.String()), received_at: Nullable(Time), created_at: Time },
      { description: 'a bank message that matched no pending payment and may be this dispute’s money: accept with its notification_id in one tap' },
    ),
  ),
});

/** GET /executor/v1/disputes */
export const ExecutorListDisputesAnswer = Type.Object({ disputes: Type.Array(ExecutorDispute), limit: Type.Number(), offset: Type.Number() });
