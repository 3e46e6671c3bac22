import { ActionIcon, Badge, Button, Card, Code, Group, List, Loader, Select, Stack, Switch, TagsInput, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { useBanks, useCreateBank, useUpdateBank } from '../../api/banks';
import { useCreateProvider, useProviders, useUpdateProvider } from '../../api/providers';
import { type RouteStep, useSetTerminalRoutes, useTerminalRoutes } from '../../api/terminals';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert, useFieldError } from '../../components/ErrorAlert';
import { useI18n } from '../../i18n';

/** The bank and operator directory: what requisites and payers may name; switch an entry off, add one. */
export function Banks() {
  const { t } = useI18n();
  const banks = useBanks();
  const create = useCreateBank();
  const fieldError = useFieldError(create.error);
  const update = useUpdateBank();
  const [form, setForm] = useState({ code: '', name: '', country: 'RU', kind: 'bank' as 'bank' | 'operator' });
  return (
    <Stack>
      <Title order={2}>{t('nav.banks')}</Title>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate(form, { onSuccess: () => setForm({ ...form, code: '', name: '' }) });
        }}
      >
        <Group align="flex-end">
          <TextInput
            label={t('banks.code')}
            value={form.code}
            onChange={(e) => setForm({ ...form, code: e.currentTarget.value.trim() })}
            error={fieldError('code')}
            w={160}
          />
          <TextInput
            label={t('banks.name')}
            value={form.name}
            onChange={(e) => setForm({ ...form, name: e.currentTarget.value })}
            error={fieldError('name')}
            w={220}
          />
          <TextInput
            label={t('banks.country')}
            value={form.country}
            onChange={(e) => setForm({ ...form, country: e.currentTarget.value.toUpperCase() })}
            error={fieldError('country')}
            w={90}
          />
          <Select
            label={t('banks.kind')}
            data={(['bank', 'operator'] as const).map((value) => ({ value, label: t(`bankKind.${value}`) }))}
            value={form.kind}
            onChange={(v) => setForm({ ...form, kind: (v ?? 'bank') as 'bank' | 'operator' })}
            w={130}
            allowDeselect={false}
          />
          <Button type="submit" loading={create.isPending}>
            {t('banks.add')}
          </Button>
        </Group>
      </form>
      <ErrorAlert error={banks.error ?? create.error ?? update.error} onFields={['code', 'name', 'country']} />
      <DataTable
        rows={banks.data?.banks ?? []}
        loaded={banks.isSuccess}
        rowKey={(bank) => bank.code}
        rowLabel={(bank) => `bank row ${bank.code}`}
        minWidth={600}
        columns={[
          { header: t('banks.code'), cell: (bank) => <Code>{bank.code}</Code> },
          { header: t('banks.name'), cell: (bank) => bank.name },
          { header: t('banks.country'), cell: (bank) => bank.country },
          { header: t('banks.kind'), cell: (bank) => t(`bankKind.${bank.kind}`) },
          {
            header: t('common.status'),
            cell: (bank) => (
              <Switch
                checked={bank.is_active}
                onChange={(e) => update.mutate({ code: bank.code, is_active: e.currentTarget.checked })}
                aria-label={`bank ${bank.code}`}
              />
            ),
          },
        ]}
      />
    </Stack>
  );
}

/** Upstream providers: add one (our keys at the provider are sealed at rest), see its circuit breaker, switch it off. */
export function Providers() {
  const { t, f } = useI18n();
  const providers = useProviders();
  const create = useCreateProvider();
  const update = useUpdateProvider();
  const [form, setForm] = useState({ name: '', kind: 'kassir', base_url: '', api_key: '', secret_key: '' });
  return (
    <Stack>
      <Title order={2}>{t('nav.providers')}</Title>
      <ErrorAlert error={providers.error ?? create.error ?? update.error} />
      {providers.data?.providers.map((p) => (
        <Card withBorder key={p.id}>
          <Group justify="space-between">
            <Text fw={500}>
              {p.name} <Badge variant="light">{p.kind}</Badge>
            </Text>
            <Switch checked={p.is_active} onChange={(e) => update.mutate({ id: p.id, is_active: e.currentTarget.checked })} aria-label={`provider ${p.name}`} />
          </Group>
          <Text size="sm">{p.base_url}</Text>
          <Text size="xs" c="dimmed">
            {t('providers.callback')}: <Code>{p.callback_url}</Code>
          </Text>
          <Text size="xs" c={p.breaker.open_until ? 'red' : 'dimmed'}>
            {t('providers.breaker')}: {p.breaker.failures}
            {p.breaker.open_until ? ` · ${t('providers.openUntil')} ${f.time(p.breaker.open_until, true)}` : ''}
          </Text>
        </Card>
      ))}
      <Card withBorder>
        <Title order={4} mb="sm">
          {t('providers.add')}
        </Title>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            create.mutate(form, { onSuccess: () => setForm({ name: '', kind: 'kassir', base_url: '', api_key: '', secret_key: '' }) });
          }}
        >
          <Group align="flex-end">
            <TextInput label={t('banks.name')} value={form.name} onChange={(e) => setForm({ ...form, name: e.currentTarget.value })} />
            <TextInput
              label={t('providers.baseUrl')}
              value={form.base_url}
              onChange={(e) => setForm({ ...form, base_url: e.currentTarget.value.trim() })}
              w={280}
            />
            <TextInput label={t('providers.apiKey')} value={form.api_key} onChange={(e) => setForm({ ...form, api_key: e.currentTarget.value.trim() })} />
            <TextInput
              label={t('providers.secretKey')}
              value={form.secret_key}
              onChange={(e) => setForm({ ...form, secret_key: e.currentTarget.value.trim() })}
            />
            <Button type="submit" loading={create.isPending}>
              {t('banks.add')}
            </Button>
          </Group>
        </form>
      </Card>
    </Stack>
  );
}

/** A terminal's route: the steps a payment tries in order (its executors, then providers), each optionally for some currencies and methods. */
export function TerminalRoutes({ terminalId }: { terminalId: string }) {
  const routes = useTerminalRoutes(terminalId);
  if (routes.error) return <ErrorAlert error={routes.error} />;
  if (!routes.data) return <Loader size="xs" />;
  // Edited from what the server answered; a save (or another person's) starts the editor afresh.
  return <RouteEditor key={routes.dataUpdatedAt} terminalId={terminalId} initial={routes.data} />;
}

/** A route step in plain words: who gets the payment, for which currencies and methods, and what happens when it cannot. */
function describeStep(t: ReturnType<typeof useI18n>['t'], step: RouteStep, providers: { id: string; name: string }[], last: boolean): string {
  const who = step.provider_id
    ? t('routes.say.provider', { name: providers.find((p) => p.id === step.provider_id)?.name ?? step.provider_id })
    : t('routes.say.executors');
  const currencies = step.currencies?.length ? step.currencies.join(', ') : t('routes.say.anyCurrency');
  const methods = step.methods?.length ? step.methods.join(', ') : t('routes.say.anyMethod');
  return `${who} ${t('routes.say.scope', { currencies, methods })} ${t(last ? 'routes.say.last' : 'routes.say.next')}`;
}

function RouteEditor({ terminalId, initial }: { terminalId: string; initial: RouteStep[] }) {
  const { t } = useI18n();
  const providers = useProviders();
  const save = useSetTerminalRoutes();
  const [steps, setSteps] = useState<RouteStep[]>(initial);
  const targets = [{ value: 'executors', label: t('routes.executors') }, ...(providers.data?.providers ?? []).map((p) => ({ value: p.id, label: p.name }))];
  const change = (index: number, next: RouteStep) => setSteps(steps.map((step, i) => (i === index ? next : step)));
  return (
    <Stack gap="xs">
      <Text size="sm" fw={500}>
        {t('routes.title')}
      </Text>
      <Text size="xs" c="dimmed">
        {t('routes.explain')}
      </Text>
      <List size="xs" c="dimmed" spacing={2}>
        <List.Item>{t('routes.explainExecutors')}</List.Item>
        <List.Item>{t('routes.explainProvider')}</List.Item>
        <List.Item>{t('routes.explainScope')}</List.Item>
        <List.Item>{t('routes.explainPayouts')}</List.Item>
      </List>
      {steps.length === 0 && (
        <Text size="sm" role="status">
          {t('routes.none')}
        </Text>
      )}
      {steps.map((step, index) => (
        // Steps have no identity but their place in the order.
        // biome-ignore lint/suspicious/noArrayIndexKey: see above
        <Group key={index} align="flex-end" gap="xs">
          <Text size="sm" w={20}>
            {index + 1}.
          </Text>
          <Select
            data={targets}
            value={step.provider_id ?? 'executors'}
            onChange={(v) =>
              change(index, { ...step, ...(v === 'executors' || !v ? { executors: true, provider_id: undefined } : { provider_id: v, executors: undefined }) })
            }
            w={200}
            allowDeselect={false}
            aria-label={t('routes.target')}
          />
          <TagsInput
            placeholder={t('routes.currencies')}
            value={step.currencies ?? []}
            onChange={(v) => change(index, { ...step, currencies: v.length ? v.map((c) => c.toUpperCase()) : undefined })}
            w={200}
          />
          <TagsInput
            placeholder={t('routes.methods')}
            value={step.methods ?? []}
            onChange={(v) => change(index, { ...step, methods: v.length ? v : undefined })}
            w={220}
          />
          <ActionIcon variant="subtle" color="red" onClick={() => setSteps(steps.filter((_, i) => i !== index))} aria-label={t('routes.remove')}>
            ×
          </ActionIcon>
          <Text size="xs" c="dimmed" w="100%" data-testid={`route-step-${index + 1}`}>
            {describeStep(t, step, providers.data?.providers ?? [], index === steps.length - 1)}
          </Text>
        </Group>
      ))}
      <Group>
        <Button size="xs" variant="default" onClick={() => setSteps([...steps, { executors: true }])}>
          {t('routes.addStep')}
        </Button>
        <Button size="xs" onClick={() => save.mutate({ terminalId, routes: steps })} loading={save.isPending}>
          {t('common.save')}
        </Button>
      </Group>
      <ErrorAlert error={save.error} />
    </Stack>
  );
}
