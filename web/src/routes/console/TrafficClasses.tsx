import { Checkbox, Group } from '@mantine/core';
import { useI18n } from '../../i18n';

/** The payers' traffic classes, in the server's order (migration 048). */
export const TRAFFIC_CLASSES = ['new', 'returning', 'trusted'] as const;

/** The classes as the form holds them: every class checked when the server says null (all). */
export const checkedClasses = (classes: string[] | null | undefined): string[] => classes ?? [...TRAFFIC_CLASSES];

/** The classes as the server takes them: all three checked is null (every class, present and future). */
export const classesInput = (checked: string[]): string[] | null =>
  TRAFFIC_CLASSES.every((c) => checked.includes(c)) ? null : TRAFFIC_CLASSES.filter((c) => checked.includes(c));

/**
 * "Takes traffic: new / returning / trusted" — the classes of payers an executor or a requisite
 * takes. At least one stays checked: a requisite that takes no one is switched off instead.
 */
export function TrafficClassesInput({ value, onChange }: { value: string[]; onChange(value: string[]): void }) {
  const { t } = useI18n();
  return (
    <Checkbox.Group
      label={t('risk.trafficClasses')}
      description={t('risk.trafficClassesHint')}
      value={value}
      onChange={(next) => {
        if (next.length > 0) onChange(next);
      }}
    >
      <Group mt={4} gap="md">
        {TRAFFIC_CLASSES.map((c) => (
          <Checkbox key={c} value={c} label={t(`risk.class.${c}`)} />
        ))}
      </Group>
    </Checkbox.Group>
  );
}
