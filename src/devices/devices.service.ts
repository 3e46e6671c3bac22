import { createHash } from 'node:crypto';
import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import type { MessageInput, MessageResult } from '../incoming/messages.service.js';
import * as messages from '../incoming/messages.service.js';
import { hashToken, randomToken } from '../lib/crypto.js';
import { isUuid } from '../lib/validators.js';
import { enqueuePersonMessage } from '../notify/outbox.repo.js';
import * as repo from './devices.repo.js';
import { type HookRequest, readIncomingSms, readSmsForwarder, readSmsGateway } from './forwarders.js';

/**
 * A registered device: its token, and the secret a forwarder app signs with, are answered once,
 * at registration. Audited (by the executor or the operator) with the registration.
 */
export async function registerDevice(
  ctx: AppContext,
  executorId: string,
  name: string,
  audit: AuditRecorder,
): Promise<{ device: repo.DeviceRow; token: string; signingSecret: string }> {
  const trimmed = name.trim();
  if (trimmed === '') throw new DomainError('VALIDATION', 'name is empty: name the phone so that you know it in the list ("Pixel 7, Sber")');
  const token = randomToken('dev_', 32);
  const signingSecret = randomToken('', 24);
  const device = await transaction(ctx.db, async (tx) => {
    const row = await repo.insertDevice(tx, executorId, trimmed, hashToken(token), ctx.box.seal(signingSecret));
    await audit(tx, 'device.register', 'device', row.id, null, { ...toDevice(row), executor_id: executorId });
    return row;
  });
  return { device, token, signingSecret };
}

export async function listDevices(ctx: AppContext, executorId: string): Promise<repo.DeviceRow[]> {
  return repo.listDevices(ctx.db, executorId);
}

/** Revokes one of the executor's devices (its token stops working), audited with the change. */
export async function revokeDevice(ctx: AppContext, executorId: string, id: string, audit: AuditRecorder): Promise<void> {
  if (!isUuid(id)) throw new DomainError('NOT_FOUND', `Device ${id} not found`);
  await transaction(ctx.db, async (tx) => {
    if (!(await repo.revokeDevice(tx, executorId, id))) throw new DomainError('NOT_FOUND', `Device ${id} not found`);
    await audit(tx, 'device.revoke', 'device', id, { revoked: false }, { revoked: true, executor_id: executorId });
  });
}

/** The device a bearer token names, if it is in use and its executor active. */
export async function deviceByToken(ctx: AppContext, token: string): Promise<repo.DeviceRow | undefined> {
  const device = await repo.findDeviceByToken(ctx.db, hashToken(token));
  return device?.executor_active ? device : undefined;
}

export async function heartbeat(ctx: AppContext, device: repo.DeviceRow, state: { battery?: number; app_version?: string }): Promise<void> {
  await repo.markSeen(ctx.db, device.id, { battery: state.battery, appVersion: state.app_version });
}

/**
 * `POST /device/v1/messages` and the forwarders' hooks: the message is incoming money's
 * (incoming/messages.service.ts); the phone is noted as alive with it.
 */
export function receiveMessage(ctx: AppContext, device: repo.DeviceRow, input: MessageInput, audit: AuditRecorder): Promise<MessageResult> {
  const seen = () => repo.markSeen(ctx.db, device.id, { battery: input.battery, appVersion: input.app_version });
  return messages.receiveMessage(ctx, { id: device.id, executor_id: device.executor_id, seen }, input, audit);
}

export function toDevice(row: repo.DeviceRow) {
  return {
    id: row.id,
    name: row.name,
    created_at: row.created_at.toISOString(),
    last_seen_at: row.last_seen_at?.toISOString() ?? null,
    battery: row.battery,
    app_version: row.app_version,
  };
}

export const FORWARDERS = {
  smsforwarder: readSmsForwarder,
  'sms-gateway': readSmsGateway,
  'incoming-sms': (request: HookRequest, secret: string) => readIncomingSms(request, secret),
} as const;
export type ForwarderFormat = keyof typeof FORWARDERS;

/**
 * The address each forwarder app posts to for this phone (docs/devices.md "The forwarder apps"),
 * on the service's public address, ready to paste into the app: the token is in the path because
 * the apps cannot add headers.
 */
export function forwarderUrls(publicBaseUrl: string, token: string): Record<ForwarderFormat, string> {
  const base = `${publicBaseUrl.replace(/\/+$/, '')}/device/v1/hooks/${encodeURIComponent(token)}`;
  return { smsforwarder: `${base}/smsforwarder`, 'sms-gateway': `${base}/sms-gateway`, 'incoming-sms': `${base}/incoming-sms` };
}

/**
 * A forwarder app's webhook (`/device/v1/hooks/<token>/<format>`): verified with the device's
 * signing secret, then a message goes the way of `POST /device/v1/messages`, a ping marks the
 * device alive, anything else is acknowledged so the app stops retrying it.
 */
export async function receiveHook(
  ctx: AppContext,
  device: repo.DeviceRow,
  format: ForwarderFormat,
  request: HookRequest,
  audit: AuditRecorder,
): Promise<MessageResult | { ignored: string } | { alive: true }> {
  const sealed = await repo.findSigningSecret(ctx.db, device.id);
  if (!sealed) throw new DomainError('AUTH_002', 'This device has no signing secret: register it again');
  const event = FORWARDERS[format](request, ctx.box.open(sealed));
  if (event.kind === 'ping') {
    await repo.markSeen(ctx.db, device.id, { battery: event.battery, appVersion: event.appVersion });
    return { alive: true };
  }
  await repo.markSeen(ctx.db, device.id, {});
  if (event.kind === 'ignored') return { ignored: event.why };
  if (event.stamp !== undefined) {
    const bodyHash = createHash('sha256').update(request.raw).digest();
    if (!(await repo.claimStamp(ctx.db, device.id, event.stamp, bodyHash))) {
      throw new DomainError('AUTH_002', 'This timestamp was already signed for another message: refused as a replay');
    }
  }
  return receiveMessage(ctx, device, { text: event.text, sender: event.sender, received_at: event.receivedAt }, audit);
}

/** Sets the executor's tolerated phone silence in minutes (null: off), audited with the change. */
export async function setSilence(ctx: AppContext, executorId: string, minutes: number | null, audit: AuditRecorder): Promise<void> {
  if (minutes !== null && (!Number.isInteger(minutes) || minutes < 1 || minutes > 10080)) {
    throw new DomainError('VALIDATION', 'minutes must be a whole number from 1 to 10080 (a week), or null to switch the rule off');
  }
  await transaction(ctx.db, async (tx) => {
    if (!(await repo.setSilence(tx, executorId, minutes))) throw new DomainError('NOT_FOUND', `Executor ${executorId} not found`);
    await audit(tx, 'executor.device_silence', 'executor', executorId, null, { device_silence_minutes: minutes });
  });
}

/** The silence sweep (every minute, with the scores): executors whose phones went quiet leave the cascade; those heard from come back. */
export async function sweepSilence(ctx: AppContext): Promise<void> {
  // The executor is told in the transaction that marks it silent: once per silence (the sweep
  // changes a row only when its state flips, and the key names the moment it did).
  const changes = await transaction(ctx.db, async (tx) => {
    const changed = await repo.sweepSilence(tx);
    for (const change of changed) {
      if (!change.devices_silent) continue;
      await enqueuePersonMessage(
        tx,
        { executorId: change.id },
        {
          kind: 'phone_silent',
          eventKey: `phone_silent:${change.id}:${change.at.getTime()}`,
          data: { executor_id: change.id, minutes: change.device_silence_minutes },
        },
      );
    }
    return changed;
  });
  for (const change of changes) {
    if (change.devices_silent)
      ctx.log.warn({ executor_id: change.id }, "the executor's phones have gone silent: its requisites are not handed out until one reports");
    else ctx.log.info({ executor_id: change.id }, "the executor's phones report again: its requisites are handed out");
  }
}

/** The payments waiting on the executor's cards, as the cabinet lists them (no merchant, no payer beyond the amount). */
export async function pendingPayments(ctx: AppContext, executorId: string) {
  return (await repo.pendingOnRequisites(ctx.db, executorId)).map(messages.pendingView);
}

/** What the executor's cards received today (completed payments), per currency. */
export async function receivedToday(ctx: AppContext, executorId: string) {
  return { received: await repo.receivedToday(ctx.db, executorId) };
}
