import type { Queryable, Tx } from '../db/pool.js';

/** Message forms people taught (parser_forms, parser_form_versions; migration 040). */

export type VersionStatus = 'draft' | 'live' | 'retired';

export interface FormRow {
  id: string;
  name: string;
  bank: string;
  currency: string;
  executor_id: string | null;
  created_by: string;
  created_at: Date;
}

export interface VersionRow {
  id: string;
  form_id: string;
  version: number;
  template: string;
  sample: string;
  source_kind: 'device_message' | 'notification' | null;
  source_id: string | null;
  status: VersionStatus;
  created_by: string;
  created_at: Date;
  published_by: string | null;
  published_at: Date | null;
  retired_at: Date | null;
  last_check: unknown;
}

/** A live version with its form's bank and currency: what reading a message needs. */
export interface LiveVersion {
  id: string;
  form_id: string;
  version: number;
  template: string;
  name: string;
  bank: string;
  currency: string;
}

const FORM = 'f.id, f.name, f.bank, f.currency, f.executor_id, f.created_by, f.created_at';
const VERSION =
  'v.id, v.form_id, v.version, v.template, v.sample, v.source_kind, v.source_id, v.status, v.created_by, v.created_at, v.published_by, v.published_at, v.retired_at, v.last_check';

export async function insertForm(tx: Tx, form: Omit<FormRow, 'id' | 'created_at'>): Promise<FormRow> {
  const { rows } = await tx.query<FormRow>(
    `INSERT INTO parser_forms AS f (name, bank, currency, executor_id, created_by) VALUES ($1, $2, $3, $4, $5) RETURNING ${FORM}`,
    [form.name, form.bank, form.currency, form.executor_id, form.created_by],
  );
  return rows[0]!;
}

/** A new draft version, numbered after the form's last one (the form is locked by the caller). */
export async function insertVersion(
  tx: Tx,
  v: Pick<VersionRow, 'form_id' | 'template' | 'sample' | 'source_kind' | 'source_id' | 'created_by'>,
): Promise<VersionRow> {
  const { rows } = await tx.query<VersionRow>(
    `INSERT INTO parser_form_versions AS v (form_id, version, template, sample, source_kind, source_id, created_by)
     SELECT $1, coalesce(max(version), 0) + 1, $2, $3, $4, $5, $6 FROM parser_form_versions WHERE form_id = $1
     RETURNING ${VERSION}`,
    [v.form_id, v.template, v.sample, v.source_kind, v.source_id, v.created_by],
  );
  return rows[0]!;
}

/** One form; owner-scoped when `executorId` is given (an executor sees only its own proposals). */
export async function findForm(db: Queryable, id: string, executorId: string | null, lock = false): Promise<FormRow | undefined> {
  const { rows } = await db.query<FormRow>(
    `SELECT ${FORM} FROM parser_forms f WHERE f.id = $1 AND ($2::uuid IS NULL OR f.executor_id = $2)${lock ? ' FOR UPDATE' : ''}`,
    [id, executorId],
  );
  return rows[0];
}

export async function listVersions(db: Queryable, formIds: string[]): Promise<VersionRow[]> {
  const { rows } = await db.query<VersionRow>(`SELECT ${VERSION} FROM parser_form_versions v WHERE v.form_id = ANY($1::uuid[]) ORDER BY v.form_id, v.version`, [
    formIds,
  ]);
  return rows;
}

export async function findVersion(db: Queryable, formId: string, version: number): Promise<VersionRow | undefined> {
  const { rows } = await db.query<VersionRow>(`SELECT ${VERSION} FROM parser_form_versions v WHERE v.form_id = $1 AND v.version = $2`, [formId, version]);
  return rows[0];
}

/** Forms newest first: every one for staff, an executor's own for the executor. */
export async function listForms(db: Queryable, executorId: string | null): Promise<FormRow[]> {
  const { rows } = await db.query<FormRow>(
    `SELECT ${FORM} FROM parser_forms f WHERE ($1::uuid IS NULL OR f.executor_id = $1) ORDER BY f.created_at DESC, f.id LIMIT 500`,
    [executorId],
  );
  return rows;
}

/** Every live version, in the order they went live (an older form is tried first). */
export async function liveVersions(db: Queryable): Promise<LiveVersion[]> {
  const { rows } = await db.query<LiveVersion>(
    `SELECT v.id, v.form_id, v.version, v.template, f.name, f.bank, f.currency
       FROM parser_form_versions v JOIN parser_forms f ON f.id = v.form_id
      WHERE v.status = 'live' ORDER BY v.published_at, v.id`,
  );
  return rows;
}

/** Retires the form's live version (guarded: only a live one); answers the one retired. */
export async function retireLive(tx: Tx, formId: string): Promise<VersionRow | undefined> {
  const { rows } = await tx.query<VersionRow>(
    `UPDATE parser_form_versions v SET status = 'retired', retired_at = now() WHERE v.form_id = $1 AND v.status = 'live' RETURNING ${VERSION}`,
    [formId],
  );
  return rows[0];
}

/** Puts a draft version live (guarded on its status). */
export async function publishVersion(tx: Tx, id: string, by: string, check: unknown): Promise<VersionRow | undefined> {
  const { rows } = await tx.query<VersionRow>(
    `UPDATE parser_form_versions v SET status = 'live', published_by = $2, published_at = clock_timestamp(), last_check = $3
      WHERE v.id = $1 AND v.status = 'draft' RETURNING ${VERSION}`,
    [id, by, JSON.stringify(check)],
  );
  return rows[0];
}

/** A bank message kept in the last `days` days, with what it was read as and the amount a person or payment confirmed. */
export interface KeptMessage {
  kind: 'device_message' | 'notification';
  id: string;
  text: string;
  sender: string | null;
  bank: string | null;
  amount: string | null;
  digits: string | null;
  /** The amount of the payment it completed or was linked to: what the message was really for. */
  confirmed: string | null;
}

export async function keptMessages(db: Queryable, days: number, limit: number): Promise<KeptMessage[]> {
  const { rows } = await db.query<KeptMessage>(
    `(SELECT 'device_message' AS kind, m.id, m.text, m.sender, r.bank_code AS bank, m.amount::text, m.digits,
             CASE WHEN n.status = 'matched' THEN n.amount::text END AS confirmed
        FROM device_messages m
        LEFT JOIN notifications n ON n.id = m.notification_id
        LEFT JOIN requisites r ON r.id = m.requisite_id
       WHERE m.created_at > now() - make_interval(days => $1)
       ORDER BY m.created_at DESC LIMIT $2)
     UNION ALL
     (SELECT 'notification', n.id, n.text, NULL, r.bank_code, n.amount::text, NULL, n.amount::text
        FROM notifications n JOIN requisites r ON r.id = n.requisite_id
       WHERE n.created_at > now() - make_interval(days => $1) AND n.text IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM device_messages m WHERE m.notification_id = n.id)
       ORDER BY n.created_at DESC LIMIT $2)`,
    [days, limit],
  );
  return rows;
}

/** The text of a message a form is taught from, and what is known of it (its linked payment, its requisite). */
export interface TeachSource {
  text: string;
  sender: string | null;
  executor_id: string;
  amount: string | null;
  currency: string | null;
  bank: string | null;
  requisite_digits: string | null;
  payment_amount: string | null;
}

export async function teachSource(
  db: Queryable,
  kind: 'device_message' | 'notification',
  id: string,
  executorId: string | null,
): Promise<TeachSource | undefined> {
  const sql =
    kind === 'device_message'
      ? `SELECT m.text, m.sender, m.executor_id, m.amount::text, coalesce(m.currency, r.currency) AS currency, r.bank_code AS bank,
                regexp_replace(r.value, '\\D', '', 'g') AS requisite_digits, CASE WHEN n.status = 'matched' THEN n.amount::text END AS payment_amount
           FROM device_messages m LEFT JOIN notifications n ON n.id = m.notification_id LEFT JOIN requisites r ON r.id = coalesce(m.requisite_id, n.requisite_id)
          WHERE m.id = $1 AND ($2::uuid IS NULL OR m.executor_id = $2)`
      : `SELECT n.text, NULL AS sender, n.executor_id, NULL AS amount, r.currency, r.bank_code AS bank,
                regexp_replace(r.value, '\\D', '', 'g') AS requisite_digits, n.amount::text AS payment_amount
           FROM notifications n JOIN requisites r ON r.id = n.requisite_id
          WHERE n.id = $1 AND n.text IS NOT NULL AND ($2::uuid IS NULL OR n.executor_id = $2)`;
  const { rows } = await db.query<TeachSource>(sql, [id, executorId]);
  return rows[0];
}
