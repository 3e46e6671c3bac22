import { TextInput } from '@mantine/core';
import { useI18n } from '../i18n';

/** A TRC-20 address's shape (base58, T and 33 more); Kassir checks the checksum itself. */
export function isTronAddress(value: string): boolean {
  return /^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(value.trim());
}

/** The wallet a withdrawal goes to: says at once when what was typed cannot be a TRC-20 address. */
export function TronAddressInput({ label, value, onChange }: { label: string; value: string; onChange: (value: string) => void }) {
  const { t } = useI18n();
  return (
    <TextInput
      label={label}
      value={value}
      onChange={(e) => onChange(e.currentTarget.value)}
      error={value.trim() && !isTronAddress(value) ? t('cabinet.badAddress') : undefined}
      autoComplete="off"
    />
  );
}
