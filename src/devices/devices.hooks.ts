import { Type } from 'typebox';
import { auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { DomainError } from '../errors.js';
import { DeviceReceiveForwardedMessageAnswer } from './devices.hooks.answers.js';
import * as devices from './devices.service.js';

const tags = ['device'];
const Params = Type.Object({ token: Type.String(), format: Type.String() });

/** The forwarder apps' webhooks: `/device/v1/hooks/<device token>/<format>` (docs/devices.md). */
export async function deviceHookRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/:token/:format',
    {
      schema: {
        documentedResponse: { 200: DeviceReceiveForwardedMessageAnswer },
        tags,
        summary: 'A forwarder app (SmsForwarder, SMS Gateway for Android, Incoming SMS to URL forwarder) posts a bank message',
        description:
          "`format`: `smsforwarder`, `sms-gateway` or `incoming-sms`; each request is verified with the device's signing secret. A bank message then goes the way of `POST /device/v1/messages`; a ping marks the phone alive; anything else is acknowledged so the app stops retrying it.",
        params: Params,
        errors: {
          NOT_FOUND: 'No forwarder `format` of this name: use smsforwarder, sms-gateway or incoming-sms',
          VALIDATION:
            'The body is not what the forwarder sends (not a JSON object: check the template in the app), or the message is empty or longer than 4000 characters',
        },
      },
      config: { invalidCode: 'VALIDATION' },
    },
    async (request) => {
      const format = request.params.format;
      if (!(format in devices.FORWARDERS)) {
        throw new DomainError('NOT_FOUND', `No forwarder format "${format}": use smsforwarder, sms-gateway or incoming-sms`);
      }
      const body = (request.body ?? { raw: Buffer.alloc(0) }) as { raw: Buffer; form?: boolean };
      return devices.receiveHook(
        ctx,
        request.device!,
        format as devices.ForwarderFormat,
        {
          raw: body.raw,
          form: body.form === true,
          headers: request.headers,
          query: request.query as Record<string, unknown>,
        },
        auditFor(request),
      );
    },
  );
}
