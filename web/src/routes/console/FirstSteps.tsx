import { Anchor, Badge, Card, Group, List, Stack, Text, ThemeIcon, Title } from '@mantine/core';
import { IconCheck, IconCircleDashed } from '@tabler/icons-react';
import { Link } from '@tanstack/react-router';
import { type FirstStep, useFirstSteps } from '../../api/firstSteps';
import { useI18n } from '../../i18n';

/** The screen where each step is taken. */
const SCREEN: Record<FirstStep, string> = {
  rate: '/rates',
  merchant: '/merchants',
  terminal: '/merchants',
  executor: '/executors',
  deposit: '/executors',
  requisite: '/executors',
  phone: '/executors',
};

/**
 * The greeting of a console that has not taken a payment yet: the steps to a first one (a rate, a
 * merchant, its terminal, an executor with a deposit and a card, a phone), each linked to its
 * screen and marked done or not from the data itself. Gone once every step is done.
 */
export function FirstSteps() {
  const { t } = useI18n();
  const steps = useFirstSteps();
  if (!steps.data || steps.data.done) return null;
  const left = steps.data.steps.filter((s) => !s.done).length;
  return (
    <Card withBorder aria-labelledby="first-steps-title">
      <Stack gap="xs">
        <Group justify="space-between">
          <Title order={3} id="first-steps-title">
            {t('firstSteps.title')}
          </Title>
          <Badge color="blue" variant="light">
            {t('firstSteps.left', { left, total: steps.data.steps.length })}
          </Badge>
        </Group>
        <Text size="sm" c="dimmed">
          {t('firstSteps.intro')}
        </Text>
        <List spacing="sm" center aria-label={t('firstSteps.title')}>
          {steps.data.steps.map(({ step, done }) => (
            <List.Item
              key={step}
              aria-label={`${t(`firstSteps.${step}`)}: ${done ? t('firstSteps.done') : t('firstSteps.todo')}`}
              icon={
                <ThemeIcon color={done ? 'green' : 'gray'} variant={done ? 'filled' : 'light'} size={22} radius="xl">
                  {done ? <IconCheck size={14} /> : <IconCircleDashed size={14} />}
                </ThemeIcon>
              }
            >
              <Text size="sm" fw={600} td={done ? 'line-through' : undefined}>
                {t(`firstSteps.${step}`)}
                {!done && (
                  <Anchor component={Link} to={SCREEN[step] as never} size="sm" ml="sm">
                    {t('firstSteps.open')}
                  </Anchor>
                )}
              </Text>
              <Text size="xs" c="dimmed">
                {t(`firstSteps.${step}.how`)}
              </Text>
            </List.Item>
          ))}
        </List>
      </Stack>
    </Card>
  );
}
