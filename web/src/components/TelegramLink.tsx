import { Alert, Button, Center, Code, Group, Image, Loader, Select, Stack, Switch, Text } from '@mantine/core';
import { IconBrandTelegram } from '@tabler/icons-react';
import { useEffect, useState } from 'react';
import { ApiError } from '../api/client';
import {
  type TelegramBase,
  type TelegramLinkCode,
  type TelegramState,
  useTelegram,
  useTelegramChange,
  useTelegramCode,
  useTelegramUnlink,
} from '../api/telegram';
import { type MessageKey, useI18n } from '../i18n';
import { ConfirmAction } from './ConfirmAction';
import { ErrorAlert } from './ErrorAlert';
import { useSecondsLeft } from './useSecondsLeft';
import { When } from './When';

/**
 * The bot is off (no TELEGRAM_BOT_TOKEN): the routes answer 409 or 503 with a sentence saying so
 * (a server from before Telegram answers 404). That is the operator's to change, not a failure of
 * this person's request, so it is told as such, with the operator's step.
 */
function notConfigured(error: unknown): error is ApiError {
  return error instanceof ApiError && (error.status === 409 || error.status === 503 || error.status === 404);
}

function NotConfigured({ error }: { error: ApiError }) {
  const { t, lang } = useI18n();
  return (
    <Alert color="yellow" title={t('telegram.notConfigured')} role="status">
      <Stack gap={4}>
        <Text size="sm">{t('telegram.notConfiguredHint')}</Text>
        {/* The server's sentence is English: in another language the hint above says the same in the person's words. */}
        {lang === 'en' && error.status !== 404 && (
          <Text size="xs" c="dimmed">
            {error.message}
          </Text>
        )}
      </Stack>
    </Alert>
  );
}

/**
 * The server's QR code as an image: an SVG shown through <img> runs no script and loads nothing,
 * whatever it contains, so the markup is never put into the page itself.
 */
function QrCode({ svg }: { svg: string }) {
  const { t } = useI18n();
  if (!/^\s*(<\?xml[^>]*>\s*)?<svg[\s>]/.test(svg)) return null;
  return (
    <Center>
      <Image src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`} alt={t('telegram.qr')} w={200} h={200} bg="white" />
    </Center>
  );
}

/**
 * A code shown: the deep link, its QR code, the time left, and the chat asked for every few seconds
 * until the person pressed Start in Telegram (the parent then shows the linked chat). An expired
 * code is not offered any more: only "New code".
 */
function CodeShown({
  base,
  code,
  botUsername,
  busy,
  onNewCode,
}: {
  base: TelegramBase;
  code: TelegramLinkCode;
  botUsername: string | null;
  busy: boolean;
  onNewCode(): void;
}) {
  const { t, f } = useI18n();
  const left = useSecondsLeft(code.expires_at);
  useTelegram(base, left > 0);
  const bot = botUsername ? `@${botUsername}` : t('telegram.bot');
  return (
    <Stack gap="sm">
      {left > 0 ? (
        <>
          <Text size="sm">{t('telegram.scan')}</Text>
          <QrCode svg={code.qr_svg} />
          <Button component="a" href={code.url} target="_blank" rel="noopener noreferrer" leftSection={<IconBrandTelegram size={18} />} fullWidth>
            {t('telegram.open')}
          </Button>
          <Text size="sm">
            {t('telegram.orSend', { bot })} <Code>/start {code.code}</Code>
          </Text>
          <Text size="sm" role="timer" aria-live="off">
            {t('telegram.validFor', { time: f.duration(left) })}
          </Text>
          <Group gap="xs" wrap="nowrap">
            <Loader size="xs" />
            <Text size="sm" c="dimmed">
              {t('telegram.waiting')}
            </Text>
          </Group>
        </>
      ) : (
        <Alert color="gray">{t('telegram.expired')}</Alert>
      )}
      <Button variant="light" onClick={onNewCode} loading={busy} disabled={busy} fullWidth>
        {t('telegram.newCode')}
      </Button>
    </Stack>
  );
}

/**
 * The name of a kind of message in the person's language; one this screen does not know yet, as the
 * server names it. Kinds the server's first catalogue spells otherwise (devices_silent for
 * phone_silent, alert_ledger_check for alert_ledger, …) have the same names in the dictionaries.
 */
function useKindName(): (kind: string) => string {
  const { t, has } = useI18n();
  return (kind) => {
    const key = `telegram.kind.${kind}`;
    return has(key) ? t(key) : kind;
  };
}

/**
 * A linked chat: who, since when, the language of the messages, a switch for each kind of message
 * the server has for this person's role, and unlinking (after a confirmation). A switch being
 * changed shows the value asked for, and every control waits while the change is on its way.
 */
function Linked({ base, state }: { base: TelegramBase; state: TelegramState }) {
  const { t } = useI18n();
  const kindName = useKindName();
  const change = useTelegramChange(base);
  const unlink = useTelegramUnlink(base);
  const [confirming, setConfirming] = useState(false);
  const name = state.username ? `@${state.username}` : t('telegram.chat');
  const asked = change.isPending ? change.variables?.switches : undefined;
  return (
    <Stack gap="sm">
      <Alert color="green" icon={<IconBrandTelegram size={18} />} title={t('telegram.linkedAs', { name })}>
        {state.linked_at && (
          <Text size="sm">
            {t('telegram.since')} <When at={state.linked_at} />
          </Text>
        )}
      </Alert>
      <Select
        label={t('telegram.language')}
        data={[
          { value: 'ru', label: 'Русский' },
          { value: 'en', label: 'English' },
        ]}
        value={change.isPending && change.variables?.language ? change.variables.language : (state.language ?? 'ru')}
        onChange={(value) => {
          if (value === 'ru' || value === 'en') change.mutate({ language: value });
        }}
        allowDeselect={false}
        disabled={change.isPending}
        maw={260}
      />
      {state.switches.length > 0 && (
        <Stack gap="xs" role="group" aria-label={t('telegram.switches')}>
          <Text fw={500} size="sm">
            {t('telegram.switches')}
          </Text>
          {state.switches.map((s) => (
            <Switch
              key={s.kind}
              label={kindName(s.kind)}
              checked={asked && s.kind in asked ? Boolean(asked[s.kind]) : s.enabled}
              disabled={change.isPending}
              onChange={(event) => change.mutate({ switches: { [s.kind]: event.currentTarget.checked } })}
              size="md"
            />
          ))}
        </Stack>
      )}
      <ErrorAlert error={change.error} />
      <Button variant="light" color="red" onClick={() => setConfirming(true)} disabled={unlink.isPending} w="fit-content">
        {t('telegram.unlink')}
      </Button>
      <ConfirmAction
        opened={confirming}
        title={t('telegram.unlinkTitle')}
        action={t('telegram.unlink')}
        busy={unlink.isPending}
        error={unlink.error}
        onConfirm={() => unlink.mutate(undefined, { onSuccess: () => setConfirming(false) })}
        onClose={() => setConfirming(false)}
      >
        {t('telegram.unlinkText', { name })}
      </ConfirmAction>
    </Stack>
  );
}

const INTRO: Record<TelegramBase, MessageKey> = {
  '/executor/v1': 'telegram.intro.executor',
  '/merchant/v1': 'telegram.intro.merchant',
  '/auth/v1': 'telegram.intro.staff',
};

/**
 * Linking the signed-in person's Telegram chat, the same in the executor's cabinet, the console and
 * the merchant cabinet (`base` names the API of the person): not linked, a button makes a one-time
 * code shown as a deep link and a QR code; linked, what is sent and in which language.
 */
export function TelegramLink({ base }: { base: TelegramBase }) {
  const { t } = useI18n();
  const state = useTelegram(base);
  const code = useTelegramCode(base);
  const linked = state.data?.linked === true;
  // A code belongs to one linking: once linked (or unlinked again) it is not shown any more.
  const resetCode = code.reset;
  useEffect(() => {
    if (linked) resetCode();
  }, [linked, resetCode]);
  if (notConfigured(state.error)) return <NotConfigured error={state.error} />;
  if (state.error) return <ErrorAlert error={state.error} />;
  if (!state.data) return <Loader size="sm" />;
  if (state.data.linked) return <Linked base={base} state={state.data} />;
  if (notConfigured(code.error)) return <NotConfigured error={code.error} />;
  return (
    <Stack gap="sm">
      <Text size="sm">{t(INTRO[base])}</Text>
      {code.data ? (
        <CodeShown base={base} code={code.data} botUsername={state.data.bot_username} busy={code.isPending} onNewCode={() => code.mutate()} />
      ) : (
        <Button onClick={() => code.mutate()} loading={code.isPending} disabled={code.isPending} leftSection={<IconBrandTelegram size={18} />} fullWidth>
          {t('telegram.connect')}
        </Button>
      )}
      <ErrorAlert error={code.error} />
    </Stack>
  );
}
