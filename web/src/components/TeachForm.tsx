import { Alert, Badge, Button, Card, CloseButton, Code, Group, Select, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { useEffect, useMemo, useRef, useState } from 'react';
import { ApiError } from '../api/client';
import {
  type CheckedLine,
  type FormArea,
  type FormHole,
  type FormMark,
  type FormSuggestion,
  useFormSuggestion,
  usePublishForm,
  useSaveForm,
} from '../api/parserForms';
import { useI18n } from '../i18n';
import { ErrorAlert } from './ErrorAlert';

const HOLES: FormHole[] = ['amount', 'card', 'payer', 'balance', 'time', 'date', 'any'];
const COLORS: Record<FormHole, string> = { amount: 'green', card: 'blue', payer: 'grape', balance: 'gray', time: 'cyan', date: 'cyan', any: 'yellow' };

/** The message with each marked span replaced by its hole: what the server compiles (escaped, anchored). */
export function templateOf(text: string, marks: FormMark[]): string {
  let template = '';
  let at = 0;
  for (const mark of [...marks].sort((a, b) => a.start - b.start)) {
    template += `${text.slice(at, mark.start)}{${mark.hole}}`;
    at = mark.end;
  }
  return template + text.slice(at);
}

function TeachBody({ area, kind, id, suggestion, onDone }: Props & { suggestion: FormSuggestion }) {
  const { t } = useI18n();
  const text = suggestion.text;
  const [marks, setMarks] = useState<FormMark[]>(suggestion.marks);
  const [template, setTemplate] = useState(() => templateOf(text, suggestion.marks));
  const [name, setName] = useState(`${suggestion.bank ?? ''} ${t('teach.defaultName')}`.trim());
  const [bank, setBank] = useState(suggestion.bank ?? '');
  const [currency, setCurrency] = useState<string | null>(suggestion.currency);
  const [saved, setSaved] = useState<{ formId: string; version: number; template: string } | null>(null);
  const [live, setLive] = useState<{ readsNewly: number } | null>(null);
  const [proposed, setProposed] = useState(false);
  const textRef = useRef<HTMLTextAreaElement>(null);
  const save = useSaveForm(area);
  const publish = usePublishForm();
  useEffect(() => setTemplate(templateOf(text, marks)), [text, marks]);

  const mark = (hole: FormHole) => {
    const el = textRef.current;
    if (!el || el.selectionStart === el.selectionEnd) return;
    const start = el.selectionStart;
    const end = el.selectionEnd;
    // One span per hole (but {any}, {time}, {date}); a new span replaces what it overlaps.
    setMarks((now) => [
      ...now.filter((m) => !(m.start < end && start < m.end) && (m.hole !== hole || hole === 'any' || hole === 'time' || hole === 'date')),
      { hole, start, end },
    ]);
  };

  const refused =
    publish.error instanceof ApiError && publish.error.code === 'FORM_001' ? ((publish.error.data?.offending as CheckedLine[] | undefined) ?? []) : null;
  const busy = save.isPending || publish.isPending;

  const submit = async () => {
    const form = { name: name.trim(), bank: bank.trim(), currency: currency ?? 'RUB', template, sample: text, source: { kind, id } };
    publish.reset();
    // A draft already saved with this very template is checked again; a changed template is a new version.
    let target = saved && saved.template === template ? saved : null;
    if (!target) {
      const stored = await save.mutateAsync({ formId: saved?.formId, form });
      const last = stored.versions[stored.versions.length - 1]!;
      target = { formId: stored.id, version: last.version, template };
      setSaved(target);
    }
    if (area === 'cabinet') {
      setProposed(true);
      return;
    }
    const result = await publish.mutateAsync({ formId: target.formId, version: target.version });
    setLive({ readsNewly: result.check.reads_newly.length });
  };

  if (live) {
    return (
      <Alert color="green" title={t('teach.liveTitle')}>
        <Text size="sm">{t('teach.live', { count: live.readsNewly })}</Text>
        <Button mt="sm" size="xs" onClick={onDone}>
          {t('common.done')}
        </Button>
      </Alert>
    );
  }
  if (proposed) {
    return (
      <Alert color="green" title={t('teach.proposedTitle')}>
        <Text size="sm">{t('teach.proposed')}</Text>
        <Button mt="sm" size="xs" onClick={onDone}>
          {t('common.done')}
        </Button>
      </Alert>
    );
  }
  return (
    <Stack gap="sm">
      <Text size="sm" c="dimmed">
        {t('teach.intro')}
      </Text>
      <Textarea ref={textRef} label={t('teach.text')} value={text} readOnly autosize minRows={2} />
      <Group gap="xs">
        {HOLES.map((hole) => (
          <Button key={hole} size="xs" variant="light" color={COLORS[hole]} onMouseDown={(e) => e.preventDefault()} onClick={() => mark(hole)}>
            {t(`teach.hole.${hole}`)}
          </Button>
        ))}
      </Group>
      <Group gap={6} aria-label={t('teach.marks')}>
        {[...marks]
          .sort((a, b) => a.start - b.start)
          .map((m) => (
            <Badge
              key={`${m.hole}-${m.start}`}
              color={COLORS[m.hole]}
              variant="light"
              rightSection={
                <CloseButton
                  size="xs"
                  aria-label={`${t('teach.unmark')} ${t(`teach.hole.${m.hole}`)}`}
                  onClick={() => setMarks((now) => now.filter((x) => x !== m))}
                />
              }
            >
              {t(`teach.hole.${m.hole}`)}: {text.slice(m.start, m.end)}
            </Badge>
          ))}
      </Group>
      <Textarea
        label={t('teach.template')}
        description={t('teach.templateHint')}
        value={template}
        onChange={(e) => setTemplate(e.currentTarget.value)}
        autosize
      />
      <Group grow align="flex-start">
        <TextInput label={t('teach.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <TextInput label={t('teach.bank')} value={bank} onChange={(e) => setBank(e.currentTarget.value)} />
        <Select label={t('teach.currency')} data={['RUB', 'KZT', 'TJS']} value={currency} onChange={setCurrency} allowDeselect={false} />
      </Group>
      <Group>
        <Button
          onClick={() => submit().catch(() => undefined)}
          loading={busy}
          disabled={busy || !name.trim() || !bank.trim() || !template.includes('{amount}')}
        >
          {area === 'console' ? t('teach.putLive') : t('teach.propose')}
        </Button>
        {saved && (
          <Text size="xs" c="dimmed">
            {t('teach.draftSaved', { version: saved.version })}
          </Text>
        )}
      </Group>
      {refused ? (
        <Alert color="red" role="alert" title={t('teach.refused')}>
          <Text size="sm">{publish.error instanceof Error ? publish.error.message : ''}</Text>
          <Stack gap={4} mt="xs">
            {refused.map((line) => (
              <Card key={`${line.source}-${line.text}`} withBorder padding="xs" aria-label={t('teach.offendingLine')}>
                <Text size="xs" fw={600}>
                  {line.source} — {line.reason}
                  {line.reads ? ` (${t('teach.reads')} ${line.reads.amount}${line.reads.digits ? ` · ${line.reads.digits}` : ''})` : ''}
                </Text>
                <Code block>{line.text}</Code>
              </Card>
            ))}
          </Stack>
        </Alert>
      ) : (
        <ErrorAlert error={save.error ?? publish.error} />
      )}
    </Stack>
  );
}

interface Props {
  area: FormArea;
  kind: 'device_message' | 'notification';
  id: string;
  onDone: () => void;
}

/**
 * "Teach this form": the message with its amount, card and payer marked (prefilled by what is
 * known of it), the bank and a name. The console saves it and puts it live, or shows the lines the
 * check refused it for; the executor's cabinet proposes it for support to review.
 */
export function TeachForm(props: Props) {
  const { t } = useI18n();
  const suggestion = useFormSuggestion(props.area, props.kind, props.id);
  const ready = useMemo(() => suggestion.data, [suggestion.data]);
  if (suggestion.error) return <ErrorAlert error={suggestion.error} />;
  if (!ready) return <Text c="dimmed">{t('common.loading')}</Text>;
  return (
    <Stack gap="xs">
      <Group justify="flex-end">
        <CloseButton aria-label={t('common.cancel')} onClick={props.onDone} />
      </Group>
      <TeachBody {...props} suggestion={ready} />
    </Stack>
  );
}
