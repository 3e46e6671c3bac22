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
          // log.error(err) takes its message from the error, which the masker below never sees.
          if (args[0] instanceof Error && typeof args[1] !== 'string') args = [{ err: args[0] }, args[0].message, ...args.slice(1)] as typeof args;
          const masked = args.map((arg) => (typeof arg === 'string' ? maskSensitive(arg) : arg));
          return method.apply(this, masked as Parameters<typeof method>);
        },
      },
      serializers: {
        // Serializers run after formatters.log, so an error's message, stack and pg detail
        // (which may quote a card number) are masked here.
        err: (err: Error) => maskDeep(pino.stdSerializers.err(err)),
      },
    },
    destination,
  );
}
