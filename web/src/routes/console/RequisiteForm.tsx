import { Button, Group, Modal, MultiSelect, NumberInput, Select, SimpleGrid, Stack, Switch, Textarea, TextInput } from '@mantine/core';
import { useState } from 'react';
import { useBanks } from '../../api/banks';
import { ApiError } from '../../api/client';
import { type RequisiteInput, type RequisiteView, useCreateRequisite, useUpdateRequisite } from '../../api/executors';
import { ErrorAlert } from '../../components/ErrorAlert';
import { type MessageKey, useI18n } from '../../i18n';
import { checkedClasses, classesInput, TrafficClassesInput } from './TrafficClasses';

const TYPES = ['card', 'sbp', 'phone', 'sim', 'qr'] as const;
type RequisiteType = (typeof TYPES)[number];

/** The methods each type of requisite can serve (the server's METHOD_TYPES, read the other way). */
const METHODS_OF: Record<RequisiteType, string[]> = {
  card: ['CARD', 'CROSS_BORDER', 'CROSS_BORDER_CARD'],
  sbp: ['SBP'],
  phone: ['PHONE', 'CROSS_BORDER', 'CROSS_BORDER_CARD'],
  sim: ['SIM', 'CROSS_BORDER_SIM'],
  qr: ['SBP_QR', 'VIET_QR'],
};

/** The currency paid into requisites of each country (the server's COUNTRY_CURRENCY): the form derives one from the other. */
const COUNTRY_CURRENCY: Record<string, string> = {
  RU: 'RUB',
  KZ: 'KZT',
  TJ: 'TJS',
  UZ: 'UZS',
  KG: 'KGS',
  AZ: 'AZN',
  AM: 'AMD',
  GE: 'GEL',
  VN: 'VND',
};

/** The fields the server names in `data.field` when it refuses a requisite, and the form's own words for each. */
const FIELD_ERRORS: Partial<Record<keyof RequisiteInput, MessageKey>> = {
  methods: 'requisites.invalid.methods',
  country: 'requisites.invalid.country',
  currency: 'requisites.invalid.country',
  bank: 'requisites.invalid.bank',
  min_amount: 'requisites.invalid.amount',
  max_amount: 'requisites.invalid.amount',
  daily_turnover_limit: 'requisites.invalid.limit',
  monthly_turnover_limit: 'requisites.invalid.limit',
  daily_count_limit: 'requisites.invalid.limit',
  monthly_count_limit: 'requisites.invalid.limit',
};

/** Refusals shown under their field; any other is shown above the buttons. */
const SHOWN_ON_FIELDS = new Set<string>(['value', ...Object.keys(FIELD_ERRORS)]);

/** The field a refusal concerns (`data.field`, as requisites.service.ts answers), or undefined for one about the whole. */
function refusedField(error: unknown): string | undefined {
  if (!(error instanceof ApiError) || error.code !== 'VALIDATION') return undefined;
  const field = error.data?.field;
  return typeof field === 'string' ? field : undefined;
}

type Form = Omit<
  RequisiteInput,
  'min_amount' | 'max_amount' | 'daily_turnover_limit' | 'monthly_turnover_limit' | 'daily_count_limit' | 'monthly_count_limit' | 'traffic_classes'
> & {
  traffic_classes: string[];
  min_amount: number | string;
  max_amount: number | string;
  daily_turnover_limit: number | string;
  monthly_turnover_limit: number | string;
  daily_count_limit: number | string;
  monthly_count_limit: number | string;
};

const blank = (value: number | null | undefined): number | string => (value === null || value === undefined ? '' : value);
const orNull = (value: number | string): number | null => (value === '' ? null : Number(value));

function initial(requisite: RequisiteView | undefined): Form {
  return {
    type: requisite?.type ?? 'card',
    // A card number is answered masked: the field stays empty, and an empty field keeps the stored number.
    value: '',
    bank: requisite?.bank ?? null,
    holder: requisite?.holder ?? '',
    country: requisite?.country ?? 'RU',
    currency: requisite?.currency ?? 'RUB',
    methods: requisite?.methods ?? ['CARD'],
    min_amount: requisite?.min_amount ?? 0,
    max_amount: blank(requisite?.max_amount),
    is_active: requisite?.is_active ?? true,
    daily_turnover_limit: blank(requisite?.daily_turnover_limit),
    monthly_turnover_limit: blank(requisite?.monthly_turnover_limit),
    daily_count_limit: blank(requisite?.daily_count_limit),
    monthly_count_limit: blank(requisite?.monthly_count_limit),
    traffic_classes: checkedClasses(requisite?.traffic_classes),
  };
}

function toInput(form: Form): RequisiteInput {
  return {
    ...form,
    value: form.value.trim(),
    holder: form.holder.trim(),
    min_amount: form.min_amount === '' ? 0 : Number(form.min_amount),
    max_amount: orNull(form.max_amount),
    daily_turnover_limit: orNull(form.daily_turnover_limit),
    monthly_turnover_limit: orNull(form.monthly_turnover_limit),
    daily_count_limit: orNull(form.daily_count_limit),
    monthly_count_limit: orNull(form.monthly_count_limit),
    traffic_classes: classesInput(form.traffic_classes),
  };
}

/**
 * Adds a requisite to an executor, or changes one: its type, number (a card's, a phone's, a SIM's) or
 * QR payload, bank or operator, holder, methods, amounts, hand-out limits and on/off. The number is
 * checked by the server as the CLI's is (a card: 13–19 digits passing Luhn; a phone: E.164; a QR: an
 * EMV payload with its CRC), and a refusal is shown on the field it concerns.
 */
export function RequisiteForm({ executorId, requisite, onClose }: { executorId: string; requisite?: RequisiteView; onClose(): void }) {
  const { t } = useI18n();
  const create = useCreateRequisite(executorId);
  const update = useUpdateRequisite();
  const banks = useBanks();
  const [form, setForm] = useState<Form>(() => initial(requisite));
  const mutation = requisite ? update : create;
  const refused = refusedField(mutation.error);
  const set = <K extends keyof Form>(key: K, value: Form[K]) => {
    mutation.reset();
    setForm((old) => ({ ...old, [key]: value }));
  };
  const type = form.type as RequisiteType;
  const errorOf = (field: keyof RequisiteInput): string | undefined => {
    if (refused !== field) return undefined;
    if (field === 'value') return t(`requisites.invalid.value.${type}`);
    const key = FIELD_ERRORS[field];
    return key ? `${t(key)} (${(mutation.error as Error).message})` : (mutation.error as Error).message;
  };
  const bankKind = type === 'sim' ? 'operator' : 'bank';
  const bankOptions = (banks.data?.banks ?? [])
    .filter((b) => b.country === form.country && b.kind === bankKind && (b.is_active || b.code === form.bank))
    .map((b) => ({ value: b.code, label: `${b.name} (${b.code})` }));
  const submit = () => {
    if (mutation.isPending) return;
    const input = toInput(form);
    if (!requisite) {
      create.mutate(input, { onSuccess: onClose });
      return;
    }
    // Only what changed: an empty number keeps the stored one.
    const before = toInput(initial(requisite));
    const changes: Partial<RequisiteInput> = {};
    for (const key of Object.keys(input) as (keyof RequisiteInput)[]) {
      if (key === 'value' ? input.value !== '' : JSON.stringify(input[key]) !== JSON.stringify(before[key])) {
        (changes as Record<string, unknown>)[key] = input[key];
      }
    }
    if (Object.keys(changes).length === 0) onClose();
    else update.mutate({ id: requisite.id, ...changes }, { onSuccess: onClose });
  };
  const valueLabel = t(`requisites.value.${type}`);
  return (
    <Modal opened onClose={onClose} title={requisite ? t('requisites.editTitle', { value: requisite.value }) : t('requisites.addTitle')} size="lg" centered>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <Stack gap="sm">
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <Select
              label={t('requisites.type')}
              data={TYPES.map((value) => ({ value, label: t(`requisites.type.${value}`) }))}
              value={form.type}
              allowDeselect={false}
              disabled={requisite !== undefined}
              onChange={(value) => {
                if (!value) return;
                set('type', value);
                set('methods', [METHODS_OF[value as RequisiteType][0]!]);
                set('bank', null);
              }}
            />
            <Select
              label={t('requisites.country')}
              description={t('requisites.currencyIs', { currency: COUNTRY_CURRENCY[form.country] ?? '—' })}
              data={Object.keys(COUNTRY_CURRENCY)}
              value={form.country}
              allowDeselect={false}
              error={errorOf('country') ?? errorOf('currency')}
              onChange={(value) => {
                if (!value) return;
                set('country', value);
                set('currency', COUNTRY_CURRENCY[value]!);
                set('bank', null);
              }}
            />
          </SimpleGrid>
          {type === 'qr' ? (
            <Textarea
              label={valueLabel}
              value={form.value}
              required={!requisite}
              autosize
              minRows={2}
              error={errorOf('value')}
              onChange={(e) => set('value', e.currentTarget.value)}
            />
          ) : (
            <TextInput
              label={valueLabel}
              description={requisite ? t('requisites.valueKeep', { value: requisite.value }) : t(`requisites.valueHint.${type}`)}
              value={form.value}
              required={!requisite}
              inputMode={type === 'card' ? 'numeric' : 'tel'}
              autoComplete="off"
              error={errorOf('value')}
              onChange={(e) => set('value', e.currentTarget.value)}
            />
          )}
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <Select
              label={t(type === 'sim' ? 'requisites.operator' : 'requisites.bank')}
              data={bankOptions}
              value={form.bank}
              searchable
              clearable={type !== 'sim'}
              required={type === 'sim'}
              nothingFoundMessage={t('common.empty')}
              error={errorOf('bank')}
              onChange={(value) => set('bank', value)}
            />
            <TextInput label={t('requisites.holder')} value={form.holder} maxLength={200} onChange={(e) => set('holder', e.currentTarget.value)} />
          </SimpleGrid>
          <MultiSelect
            label={t('requisites.methods')}
            data={METHODS_OF[type]}
            value={form.methods}
            error={errorOf('methods')}
            onChange={(value) => set('methods', value)}
          />
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <NumberInput
              label={t('requisites.minAmount')}
              value={form.min_amount}
              min={0}
              decimalScale={2}
              error={errorOf('min_amount')}
              onChange={(v) => set('min_amount', v)}
            />
            <NumberInput
              label={t('requisites.maxAmount')}
              description={t('requisites.noLimitHint')}
              value={form.max_amount}
              min={0}
              decimalScale={2}
              error={errorOf('max_amount')}
              onChange={(v) => set('max_amount', v)}
            />
            <NumberInput
              label={t('requisites.dailyTurnover')}
              description={t('requisites.defaultHint')}
              value={form.daily_turnover_limit}
              min={0}
              decimalScale={2}
              error={errorOf('daily_turnover_limit')}
              onChange={(v) => set('daily_turnover_limit', v)}
            />
            <NumberInput
              label={t('requisites.monthlyTurnover')}
              description={t('requisites.defaultHint')}
              value={form.monthly_turnover_limit}
              min={0}
              decimalScale={2}
              error={errorOf('monthly_turnover_limit')}
              onChange={(v) => set('monthly_turnover_limit', v)}
            />
            <NumberInput
              label={t('requisites.dailyCount')}
              description={t('requisites.defaultHint')}
              value={form.daily_count_limit}
              min={0}
              allowDecimal={false}
              error={errorOf('daily_count_limit')}
              onChange={(v) => set('daily_count_limit', v)}
            />
            <NumberInput
              label={t('requisites.monthlyCount')}
              description={t('requisites.defaultHint')}
              value={form.monthly_count_limit}
              min={0}
              allowDecimal={false}
              error={errorOf('monthly_count_limit')}
              onChange={(v) => set('monthly_count_limit', v)}
            />
          </SimpleGrid>
          <TrafficClassesInput value={form.traffic_classes} onChange={(value) => set('traffic_classes', value)} />
          <Switch label={t('requisites.active')} checked={form.is_active} onChange={(e) => set('is_active', e.currentTarget.checked)} />
          {mutation.error && !(refused && SHOWN_ON_FIELDS.has(refused)) ? <ErrorAlert error={mutation.error} /> : null}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              {t('common.cancel')}
            </Button>
            <Button type="submit" loading={mutation.isPending} disabled={mutation.isPending || form.methods.length === 0}>
              {requisite ? t('common.save') : t('requisites.add')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
