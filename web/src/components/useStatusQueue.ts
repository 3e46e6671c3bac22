import { useI18n } from '../i18n';
import { useStatusName } from './StatusBadge';
import { pageOf, useUrlFilters } from './useUrlFilters';

/**
 * A queue screen's state in the URL: the status tab (`all` sends none), the page, and the tabs
 * for ListHeader. Payouts and withdrawals share their statuses.
 */
export function useStatusQueue(statuses: readonly string[], defaultStatus: string, limit: number) {
  const { t } = useI18n();
  const { statusName } = useStatusName();
  const [filters, setFilters] = useUrlFilters();
  const status = filters.status ?? defaultStatus;
  const page = pageOf(filters, limit);
  return {
    filters,
    setFilters,
    page,
    /** The status to send: none for `all`. */
    status: status === 'all' ? undefined : status,
    tabs: {
      value: status,
      initial: defaultStatus,
      onChange: (value: string) => setFilters({ status: value }),
      options: statuses.map((value) => ({ value, label: value === 'all' ? t('common.all') : statusName(value) })),
    },
  };
}
