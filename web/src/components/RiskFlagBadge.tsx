import { Badge, Group, Tooltip } from '@mantine/core';
import { useI18n } from '../i18n';

/** A risk rule's flag as a card lists it (`risk_flags` on the operator's payment and dispute answers). */
export interface RiskFlag {
  id: string;
  rule: string;
  figure: string;
  dispute_id: string | null;
  created_at: string;
  settled_at: string | null;
  settled_by: string | null;
}

const LABELS = {
  receipt_reused: 'riskFlag.receipt_reused',
  reference_reused: 'riskFlag.reference_reused',
  payer_name: 'riskFlag.payer_name',
} as const;

/**
 * A red "Check: receipt reused" badge for each rule with a flag no person settled yet, its figure
 * on hover (issue 36 item 4): where a person looks, the dispute's row and the payment's card. A
 * flag never decides; it only says where to look.
 */
export function RiskFlagBadges({ flags, size = 'sm' }: { flags: RiskFlag[] | undefined; size?: 'xs' | 'sm' }) {
  const { t } = useI18n();
  const open = (flags ?? []).filter((f) => f.settled_at === null);
  if (open.length === 0) return null;
  const byRule = new Map<string, RiskFlag[]>();
  for (const flag of open) byRule.set(flag.rule, [...(byRule.get(flag.rule) ?? []), flag]);
  return (
    <Group gap={4} wrap="wrap">
      {[...byRule].map(([rule, list]) => {
        const label = t(LABELS[rule as keyof typeof LABELS] ?? 'riskFlag.other');
        return (
          <Tooltip key={rule} label={list.map((f) => f.figure).join('\n')} multiline maw={320}>
            <Badge color="red" variant="filled" size={size} aria-label={label} style={{ maxWidth: '100%' }}>
              {label}
            </Badge>
          </Tooltip>
        );
      })}
    </Group>
  );
}
