import { Badge } from '@mantine/core';

const COLORS: Record<string, string> = {
  PENDING: 'blue',
  COMPLETED: 'green',
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
};

export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge color={COLORS[status] ?? 'gray'} variant="light">
      {status}
    </Badge>
  );
}
