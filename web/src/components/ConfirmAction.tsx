import { Button, Group, Modal, Stack, Text, Textarea } from '@mantine/core';
import { type ReactNode, useEffect, useState } from 'react';
import { useI18n } from '../i18n';
import { ErrorAlert } from './ErrorAlert';

/**
 * The one step before an irreversible action (cancelling a payment, deciding a dispute): a dialog
 * that says what will happen, asks a reason when the action needs one (required: the button stays
 * off until there is some text), and acts only from its own button — a click elsewhere, Escape or
 * "Back" decides nothing. The button shows the request running and is off meanwhile.
 */
export function ConfirmAction({
  opened,
  title,
  children,
  action,
  color = 'red',
  askReason = false,
  busy,
  error,
  onConfirm,
  onClose,
}: {
  opened: boolean;
  title: string;
  /** What will happen, named: the payment, the amount, the status it goes to. */
  children: ReactNode;
  /** The confirming button's label. */
  action: string;
  color?: string;
  askReason?: boolean;
  busy: boolean;
  error: unknown;
  onConfirm(reason: string | undefined): void;
  onClose(): void;
}) {
  const { t } = useI18n();
  const [reason, setReason] = useState('');
  // Each opening starts with an empty reason: a reason belongs to one decision.
  useEffect(() => {
    if (opened) setReason('');
  }, [opened]);
  const missing = askReason && reason.trim() === '';
  return (
    <Modal opened={opened} onClose={onClose} title={title} centered>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (!missing && !busy) onConfirm(askReason ? reason.trim() : undefined);
        }}
      >
        <Stack>
          <Text size="sm" component="div">
            {children}
          </Text>
          {askReason && (
            <Textarea
              label={t('action.reason')}
              description={t('action.reasonHint')}
              value={reason}
              onChange={(event) => setReason(event.currentTarget.value)}
              maxLength={1000}
              autosize
              minRows={2}
              required
              data-autofocus
            />
          )}
          <ErrorAlert error={error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              {t('action.back')}
            </Button>
            <Button type="submit" color={color} disabled={missing} loading={busy}>
              {action}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
