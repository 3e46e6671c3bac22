import { AreaChart, BarChart } from '@mantine/charts';
import { Anchor, Card, Group, SegmentedControl, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { type Figures, useDashboard } from '../../api/dashboard';
import { DataTable } from '../../components/DataTable';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Money } from '../../components/Money';
import { useNames } from '../../components/useNames';
import { useUrlFilters } from '../../components/useUrlFilters';
import { type MessageKey, useI18n } from '../../i18n';
import { FirstSteps } from './FirstSteps';
import { useRiskNames } from './riskNames';

function Stat({ label, value }: { label: MessageKey; value: React.ReactNode }) {
  const { t } = useI18n();
  return (
    <Card withBorder padding="sm">
      <Text size="xs" c="dimmed" tt="uppercase">
        {t(label)}
      </Text>
      <Text size="xl" fw={600}>
        {value}
      </Text>
    </Card>
  );
}

function FiguresTable({ rows, name }: { rows: (Figures & { key: string; name: string })[]; name: MessageKey }) {
  const { t, f } = useI18n();
  return (
    <DataTable
      rows={rows}
      rowKey={(row) => row.key}
      rowLabel={(row) => `${t(name)} ${row.name}`}
      minWidth={420}
      striped={false}
      columns={[
        { header: t(name), cell: (row) => row.name },
        { header: t('dashboard.created'), cell: (row) => f.number(row.created) },
        { header: t('dashboard.conversion'), cell: (row) => f.percent(row.conversion, { fraction: true }) },
        { header: t('dashboard.median'), cell: (row) => f.duration(row.median_seconds_to_complete) },
      ]}
    />
  );
}

/** Is it converting? Payments over time, conversion and time to pay, lost demand, what waits for people, balances; refreshed live. */
export function Dashboard() {
  const { t, f, has } = useI18n();
  const names = useNames();
  const risk = useRiskNames();
  const codeName = (code: string) => {
    const key = `error.code.${code}`;
    return has(key) ? t(key) : code;
  };
  const [filters, setFilters] = useUrlFilters();
  const window = filters.window === 'day' ? 'day' : 'hour';
  const dashboard = useDashboard(window);
  const d = dashboard.data;
  const time = (iso: string) => f.time(iso);
  return (
    <Stack>
      <FirstSteps />
      <Group justify="space-between">
        <Title order={2}>{t('dashboard.title')}</Title>
        <SegmentedControl
          value={window}
          onChange={(value) => setFilters({ window: value === 'hour' ? undefined : value })}
          data={[
            { value: 'hour', label: t('dashboard.hour') },
            { value: 'day', label: t('dashboard.day') },
          ]}
        />
      </Group>
      <ErrorAlert error={dashboard.error} />
      {d && (
        <>
          <SimpleGrid cols={{ base: 2, md: 4 }}>
            <Stat label="dashboard.created" value={f.number(d.totals.created)} />
            <Stat label="dashboard.completed" value={f.number(d.totals.completed)} />
            <Stat label="dashboard.conversion" value={f.percent(d.totals.conversion, { fraction: true })} />
            <Stat label="dashboard.median" value={f.duration(d.totals.median_seconds_to_complete)} />
          </SimpleGrid>
          <Card withBorder>
            <Text fw={500} mb="sm">
              {t('dashboard.perMinute')}
            </Text>
            <AreaChart
              h={220}
              data={d.series.map((point) => ({ at: time(point.at), [t('dashboard.created')]: point.created, [t('dashboard.completed')]: point.completed }))}
              dataKey="at"
              series={[
                { name: t('dashboard.created'), color: 'blue.5' },
                { name: t('dashboard.completed'), color: 'teal.6' },
              ]}
              curveType="monotone"
              withDots={false}
              tickLine="x"
            />
          </Card>
          <SimpleGrid cols={{ base: 1, md: 2 }}>
            <Card withBorder>
              <Text fw={500} mb="sm">
                {t('dashboard.queues')}
              </Text>
              <Stack gap={4}>
                <Anchor component={Link} to={'/disputes' as never}>
                  {t('nav.disputes')}: {d.queues.disputes_open}
                </Anchor>
                <Anchor component={Link} to={'/notifications' as never}>
                  {t('nav.notifications')}: {d.queues.notifications_unmatched}
                </Anchor>
                <Anchor component={Link} to={'/device-messages' as never} search={{ status: 'waiting' } as never}>
                  {t('nav.deviceMessages')}: {d.queues.device_messages_waiting}
                </Anchor>
                <Anchor component={Link} to={'/payouts' as never}>
                  {t('nav.payouts')}: {d.queues.payouts_pending + d.queues.payouts_processing}
                </Anchor>
                <Anchor component={Link} to={'/withdrawals' as never}>
                  {t('nav.withdrawals')}: {d.queues.withdrawals_pending + d.queues.withdrawals_processing}
                </Anchor>
              </Stack>
            </Card>
            <Card withBorder>
              <Text fw={500} mb="sm">
                {t('dashboard.balances')}
              </Text>
              <Table>
                <Table.Tbody>
                  <Table.Tr>
                    <Table.Td>{t('nav.merchants')}</Table.Td>
                    <Table.Td>
                      <Money value={d.balances.terminals_available} /> (+
                      <Money value={d.balances.terminals_frozen} />)
                    </Table.Td>
                  </Table.Tr>
                  <Table.Tr>
                    <Table.Td>{t('nav.executors')}</Table.Td>
                    <Table.Td>
                      <Money value={d.balances.executors_available} /> (+
                      <Money value={d.balances.executors_frozen} />)
                    </Table.Td>
                  </Table.Tr>
                  <Table.Tr>
                    <Table.Td>{t('dashboard.revenue')}</Table.Td>
                    <Table.Td>
                      <Money value={d.balances.platform_revenue} />
                    </Table.Td>
                  </Table.Tr>
                </Table.Tbody>
              </Table>
            </Card>
          </SimpleGrid>
          <Card withBorder>
            <Text fw={500} mb="sm">
              {t('dashboard.lost')}: {f.number(d.lost_demand.total)}
            </Text>
            {d.lost_demand.rows.length > 0 ? (
              <BarChart
                h={Math.max(120, d.lost_demand.rows.length * 36)}
                orientation="vertical"
                data={d.lost_demand.rows.map((row) => ({
                  what: [row.risk_rule ? risk.rule(row.risk_rule) : codeName(row.code), names.method(row.method), names.bank(row.bank)]
                    .filter(Boolean)
                    .join(' · '),
                  [t('dashboard.refused')]: row.count,
                }))}
                dataKey="what"
                series={[{ name: t('dashboard.refused'), color: 'orange.6' }]}
                yAxisProps={{ width: 160 }}
              />
            ) : (
              <Text c="dimmed">{t('common.empty')}</Text>
            )}
            {d.lost_demand.by_rule.length > 0 && (
              <>
                <Text fw={500} mt="md" mb="sm">
                  {t('dashboard.byRule')}
                </Text>
                <BarChart
                  h={Math.max(100, d.lost_demand.by_rule.length * 36)}
                  orientation="vertical"
                  aria-label={t('dashboard.byRule')}
                  data={d.lost_demand.by_rule.map((row) => ({
                    what: row.rule ? risk.rule(row.rule) : t('dashboard.poolOwn'),
                    [t('dashboard.refused')]: row.count,
                  }))}
                  dataKey="what"
                  series={[{ name: t('dashboard.refused'), color: 'red.6' }]}
                  yAxisProps={{ width: 160 }}
                />
              </>
            )}
          </Card>
          <SimpleGrid cols={{ base: 1, lg: 2 }}>
            <Card withBorder>
              <Text fw={500} mb="sm">
                {t('dashboard.byTerminal')}
              </Text>
              <FiguresTable
                name="dashboard.terminal"
                rows={d.by_terminal.map((row) => ({ ...row, key: row.terminal_id, name: `${row.merchant_name} · ${row.terminal_name}` }))}
              />
            </Card>
            <Card withBorder>
              <Text fw={500} mb="sm">
                {t('dashboard.byExecutor')}
              </Text>
              <FiguresTable name="executors.name" rows={d.by_executor.map((row) => ({ ...row, key: row.executor_id, name: row.executor_name }))} />
            </Card>
          </SimpleGrid>
        </>
      )}
    </Stack>
  );
}
