import { Alert, Anchor, Button, Card, Code, Group, NumberInput, PasswordInput, Select, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { useMerchantMe } from '../../api/merchant';
import { useI18n } from '../../i18n';

/** Long lines (the signed text, a body) wrap rather than hide past the card's edge. */
const WRAP = { whiteSpace: 'pre-wrap', wordBreak: 'break-all' } as const;

const METHODS = ['CARD', 'SBP', 'SBP_QR', 'PHONE', 'SIM', 'CROSS_BORDER', 'CROSS_BORDER_CARD', 'CROSS_BORDER_SIM', 'VIET_QR'];

interface Exchange {
  stringToSign: string;
  request: { method: string; url: string; headers: Record<string, string>; body: string };
  response: { status: number; body: string };
  /** The created payment's page, for the payer: a link to open. */
  paymentUrl?: string;
}

/** base64(HMAC-SHA1(secret, text)), as the merchant API's X-Signature; computed in the browser, the keys never sent anywhere else. */
async function sign(secret: string, text: string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-1' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(text)));
  let binary = '';
  for (const byte of mac) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * The test console: creates a real payment through the signed merchant API, signing in the
 * browser with the terminal's API key and the secret key the developer pastes, and shows the
 * exact request (the string signed, the headers, the body) and Kassir's answer — a working
 * example of the signing scheme to compare one's own code with.
 */
export function MerchantTestConsole() {
  const { t } = useI18n();
  const me = useMerchantMe();
  const [apiKey, setApiKey] = useState('');
  const [secret, setSecret] = useState('');
  const [amount, setAmount] = useState<string | number>(1000);
  const [method, setMethod] = useState<string | null>('CARD');
  const [notifyUrl, setNotifyUrl] = useState('');
  const [exchange, setExchange] = useState<Exchange | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const send = async () => {
    setProblem(null);
    if (!globalThis.crypto?.subtle) {
      setProblem(t('merchant.testNeedsHttps'));
      return;
    }
    setBusy(true);
    try {
      const base = (me.data?.api_base_url ?? window.location.origin).replace(/\/+$/, '');
      const path = '/v1/payments';
      const body = JSON.stringify({
        ext_id: `test-${new Date().toISOString().replace(/\D/g, '')}`,
        amount: Number(amount),
        method: method ?? 'CARD',
        ...(notifyUrl.trim() ? { notify_url: notifyUrl.trim() } : {}),
      });
      const stringToSign = `POST${base}${path}${body}`;
      const headers = { 'content-type': 'application/json', 'x-identity': apiKey.trim(), 'x-signature': await sign(secret.trim(), stringToSign) };
      // Sent to this origin (the page's own), signed for the public base URL the server checks against.
      const response = await fetch(path, { method: 'POST', headers, body, credentials: 'omit' });
      const text = await response.text();
      let shown = text;
      let paymentUrl: string | undefined;
      try {
        const parsed = JSON.parse(text) as { payment_url?: unknown };
        shown = JSON.stringify(parsed, null, 2);
        if (typeof parsed.payment_url === 'string' && /^https?:\/\//.test(parsed.payment_url)) paymentUrl = parsed.payment_url;
      } catch {
        // Not JSON: shown as it came.
      }
      setExchange({
        stringToSign,
        request: { method: 'POST', url: `${base}${path}`, headers, body },
        response: { status: response.status, body: shown },
        paymentUrl,
      });
    } catch (err) {
      setProblem(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Stack>
      <Title order={2}>{t('merchant.test')}</Title>
      <Text size="sm" c="dimmed">
        {t('merchant.testHint')}
      </Text>
      <Card withBorder>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void send();
          }}
        >
          <Stack gap="xs">
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              <TextInput label="X-Identity (API key)" value={apiKey} onChange={(e) => setApiKey(e.currentTarget.value)} autoComplete="off" />
              <PasswordInput label={t('merchant.secret')} value={secret} onChange={(e) => setSecret(e.currentTarget.value)} autoComplete="off" />
            </SimpleGrid>
            <Group grow align="flex-end">
              <NumberInput label={t('common.amount')} value={amount} onChange={setAmount} min={0} decimalScale={2} />
              <Select label={t('payments.method')} data={METHODS} value={method} onChange={setMethod} />
              <TextInput label="notify_url" value={notifyUrl} onChange={(e) => setNotifyUrl(e.currentTarget.value)} placeholder="https://…" />
            </Group>
            <Button type="submit" w="fit-content" loading={busy} disabled={!apiKey.trim() || !secret.trim() || !Number(amount)}>
              {t('merchant.testSend')}
            </Button>
          </Stack>
        </form>
      </Card>
      {problem && <Alert color="red">{problem}</Alert>}
      {exchange && (
        <SimpleGrid cols={{ base: 1, lg: 2 }}>
          <Card withBorder aria-label="signed request">
            <Title order={4}>{t('merchant.testRequest')}</Title>
            <Text size="xs" c="dimmed" mt="xs">
              {t('merchant.testSigned')}
            </Text>
            <Code block style={WRAP}>
              {exchange.stringToSign}
            </Code>
            <Code block mt="xs" style={WRAP}>
              {[
                `${exchange.request.method} ${exchange.request.url}`,
                ...Object.entries(exchange.request.headers).map(([name, value]) => `${name}: ${value}`),
                '',
                exchange.request.body,
              ].join('\n')}
            </Code>
          </Card>
          <Card withBorder aria-label="response">
            <Title order={4}>
              {t('merchant.testResponse')} · {exchange.response.status}
            </Title>
            {exchange.paymentUrl && (
              <Text size="sm" mt="xs">
                {t('merchant.testPaymentUrl')}:{' '}
                <Anchor href={exchange.paymentUrl} target="_blank" rel="noopener noreferrer" style={WRAP}>
                  {exchange.paymentUrl}
                </Anchor>
              </Text>
            )}
            <Code block mt="xs" c={exchange.response.status >= 400 ? 'red' : undefined}>
              {exchange.response.body}
            </Code>
          </Card>
        </SimpleGrid>
      )}
    </Stack>
  );
}
