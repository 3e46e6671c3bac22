import { type Static, Type } from 'typebox';
import { COUNTRY_CURRENCY } from '../lib/methods.js';
import type { BankRow } from './banks.repo.js';

/** A country the directory serves: one whose currency Kassir prices. */
const Country = Type.String({ enum: Object.keys(COUNTRY_CURRENCY) });

const BankEntry = Type.Object({ code: Type.String(), name: Type.String() });
export const BankDirectory = Type.Object({ banks: Type.Array(BankEntry) });

export const AdminBank = Type.Object({
  code: Type.String(),
  name: Type.String(),
  country: Type.String(),
  kind: Type.Union([Type.Literal('bank'), Type.Literal('operator')]),
  is_active: Type.Boolean(),
  operator_code: Type.Union([Type.String(), Type.Null()], {
    description: 'for a bank code that also names a mobile operator (mts): the operator it stands for in sim requisites and SIM payments',
  }),
});

/** A directory entry as the operator API shows it. */
export function toAdminBank(row: BankRow): Static<typeof AdminBank> {
  return { code: row.code, name: row.name, country: row.country, kind: row.kind, is_active: row.is_active, operator_code: row.operator_code };
}

export const CreateBankBody = Type.Object({
  code: Type.String({ pattern: '^[a-z0-9_]{2,64}$' }),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  country: Country,
  kind: Type.Union([Type.Literal('bank'), Type.Literal('operator')], { default: 'bank' }),
  is_active: Type.Optional(Type.Boolean()),
});
export type CreateBankBody = Static<typeof CreateBankBody>;

export const UpdateBankBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  country: Type.Optional(Country),
  kind: Type.Optional(Type.Union([Type.Literal('bank'), Type.Literal('operator')])),
  is_active: Type.Optional(Type.Boolean()),
  operator_code: Type.Optional(Type.Union([Type.String({ pattern: '^[a-z0-9_]{2,64}$' }), Type.Null()])),
});
export type UpdateBankBody = Static<typeof UpdateBankBody>;
