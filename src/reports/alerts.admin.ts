import { Type } from 'typebox';
import { auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import type { AlertSettings } from '../settings.js';
import { getAlerts, putAlerts } from './alerts.js';

const tags = ['operator'];

const Settings = Type.Object({
  cooldown_minutes: Type.Integer({ description: 'a rule tells the same people of the same thing at most once in this many minutes (default 30)' }),
  webhook_failures: Type.Integer({
    description: "failed attempts in a row after which a merchant's webhook endpoint is failing: the merchant and support are told (default 3)",
  }),
  conversion_min_percent: Type.Number({ description: 'conversion (completed ÷ ended payments) below this percent alerts (default 20)' }),
  conversion_window_minutes: Type.Integer({ description: 'the conversion rule looks at payments created in this many minutes (default 60)' }),
  conversion_min_payments: Type.Integer({ description: 'with fewer ended payments in the window the conversion rule says nothing (default 10)' }),
});

const AlertsAnswer = Type.Object({
  settings: Settings,
  rules: Type.Array(
    Type.Object({
      kind: Type.String({ description: 'the Telegram message kind (a person may switch it off)' }),
      roles: Type.Array(Type.String(), { description: 'the staff roles told' }),
      about: Type.String(),
    }),
  ),
});

const PutBody = Type.Partial(Settings);

/** `GET`/`PUT /admin/v1/alerts`: the staff alert rules' thresholds (issue 37 item 3; docs/alerts.rules.yml for Prometheus). */
export async function alertAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/alerts',
    {
      config: { access: 'admin' },
      schema: { tags, summary: 'The staff alert rules, who each tells, and their thresholds', response: { 200: AlertsAnswer } },
    },
    async () => getAlerts(ctx),
  );

  app.put(
    '/alerts',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        summary: 'Change the alert thresholds (the fields given; audited)',
        body: PutBody,
        response: { 200: AlertsAnswer },
        errors: { VALIDATION: 'A threshold out of its bounds: the message names the field' },
      },
    },
    async (request) => putAlerts(ctx, request.body as Partial<AlertSettings>, auditFor(request)),
  );
}
