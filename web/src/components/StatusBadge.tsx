import { Badge } from '@mantine/core';
import { useI18n } from '../i18n';

const COLORS: Record<string, string> = {
  PENDING: 'blue',
  PROCESSING: 'cyan',
  COMPLETED: 'green',
  COMPLETED_APPEAL: 'teal',
  CANCELLED: 'gray',
  DISPUTE: 'orange',
  CANCELLED_APPEAL: 'grape',
  completed: 'green',
  pending: 'blue',
  processing: 'cyan',
  failed: 'red',
  cancelled: 'gray',
  open: 'orange',
  approved: 'green',
  rejected: 'red',
  unmatched: 'orange',
  late: 'yellow',
  matched: 'green',
  resolved: 'gray',
  delivered: 'green',
  ambiguous: 'orange',
  unreadable: 'red',
  ignored: 'gray',
};

/** A status as a person says it in their language ("завершён", "Completed"); the API's code is kept in `data-status`. */
export function StatusBadge({ status }: { status: string }) {
  const { statusName } = useStatusName();
  return (
    <Badge color={COLORS[status] ?? 'gray'} variant="light" data-status={status}>
      {statusName(status)}
    </Badge>
  );
}

/** The name of a status (payments', payouts', disputes', messages'…) in the person's language; an unknown one as words, not a code. */
export function useStatusName() {
  const { t, has } = useI18n();
  return {
    statusName: (status: string): string => {
      const key = `status.${status}`;
      return has(key) ? t(key) : status.replaceAll('_', ' ').toLowerCase();
    },
  };
}
