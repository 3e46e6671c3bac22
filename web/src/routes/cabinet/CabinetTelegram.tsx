import { Stack, Title } from '@mantine/core';
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
