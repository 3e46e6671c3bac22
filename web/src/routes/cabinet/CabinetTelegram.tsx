import { Button, Card, Stack, Text, Title } from '@mantine/core';
import { IconBrandTelegram } from '@tabler/icons-react';
import { Link } from '@tanstack/react-router';
import { useTelegram } from '../../api/telegram';
import { TelegramLink } from '../../components/TelegramLink';
import { useI18n } from '../../i18n';

/** The executor links Telegram on the phone they work from: the deep link opens the bot in the Telegram app on the same phone. */
export function CabinetTelegram() {
  const { t } = useI18n();
  return (
    <Stack>
      <Title order={4}>{t('telegram.title')}</Title>
      <TelegramLink base="/executor/v1" />
    </Stack>
  );
}

/**
 * On Today, below the work: an executor whose chat is not linked is offered Telegram once the bot
 * is on (a bot that is off, or a failure, shows nothing here; the Telegram screen says why).
 */
export function TelegramNudge() {
  const { t } = useI18n();
  const telegram = useTelegram('/executor/v1');
  if (telegram.data?.linked !== false) return null;
  return (
    <Card withBorder component="section" aria-label={t('telegram.title')}>
      <Stack gap="xs">
        <Text size="sm">{t('telegram.nudge')}</Text>
        <Button component={Link} to={'/telegram' as never} variant="light" leftSection={<IconBrandTelegram size={18} />} fullWidth>
          {t('telegram.connect')}
        </Button>
      </Stack>
    </Card>
  );
}
