import pino, { type Logger } from 'pino';
import { maskDeep, maskSensitive } from './mask.js';

export type { Logger };

/**
 * The service's structured logger. Every record passes through the masker, so a card or phone
 * number that slips into a message or a field is never written in clear.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'kassir' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        log: (record) => maskDeep(record) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          const masked = args.map((arg) => (typeof arg === 'string' ? maskSensitive(arg) : arg));
          return method.apply(this, masked as Parameters<typeof method>);
        },
      },
      serializers: {
        err: pino.stdSerializers.err,
      },
    },
    destination,
  );
}
