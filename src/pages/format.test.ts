import { describe, expect, it } from 'vitest';
import { countryName, formatAmount, formatCountdown, formatPhone, groupCard, phoneForCopy } from './format.js';

const NBSP = '\u00a0';

describe('payment page formatting', () => {
  it('amounts: grouped, kopecks only when there are any, from the decimal string (no float)', () => {
    expect(formatAmount('1500.00', 'RUB', 'ru')).toEqual({ text: `1${NBSP}500${NBSP}₽`, copy: '1500' });
    expect(formatAmount('1500.00', 'RUB', 'en')).toEqual({ text: `1,500${NBSP}₽`, copy: '1500' });
    expect(formatAmount('2750.50', 'RUB', 'ru')).toEqual({ text: `2${NBSP}750,50${NBSP}₽`, copy: '2750,50' });
    expect(formatAmount('573.3', 'TJS', 'en')).toEqual({ text: `573.30${NBSP}TJS`, copy: '573.30' });
    expect(formatAmount('300000.05', 'KZT', 'en').text).toBe(`300,000.05${NBSP}KZT`);
    // Beyond a double's exact range, still exact.
    expect(formatAmount('9007199254740993.01', 'RUB', 'en').copy).toBe('9007199254740993.01');
    expect(formatAmount('265969.00', 'VND', 'ru').text).toBe(`265${NBSP}969${NBSP}VND`);
  });

  it('card numbers in groups of four', () => {
    expect(groupCard('2200123456789012')).toBe('2200 1234 5678 9012');
    expect(groupCard('2200123456789012345')).toBe('2200 1234 5678 9012 345');
  });

  it('phone numbers in their national format', () => {
    expect(formatPhone('+79123456789')).toBe('+7 912 345-67-89');
    expect(formatPhone('+77011234567')).toBe('+7 701 123-45-67');
    expect(formatPhone('+992901234567')).toBe('+992 90 123 4567');
    expect(formatPhone('+998901234567')).toBe('+998 90 123-45-67');
    expect(formatPhone('+996555123456')).toBe('+996 555 123 456');
  });

  it('phone numbers of unknown shapes as +digits', () => {
    expect(formatPhone('+4915112345678')).toBe('+4915112345678');
  });

  it('a phone number copied as +digits', () => {
    expect(phoneForCopy('+7 912 345-67-89')).toBe('+79123456789');
  });

  it('countries by name in the page language', () => {
    expect(countryName('TJ', 'ru')).toBe('Таджикистан');
    expect(countryName('TJ', 'en')).toBe('Tajikistan');
  });

  it('the countdown as m:ss or h:mm:ss, never below 0:00', () => {
    expect(formatCountdown(899_001)).toBe('15:00');
    expect(formatCountdown(61_000)).toBe('1:01');
    expect(formatCountdown(3_723_000)).toBe('1:02:03');
    expect(formatCountdown(-5_000)).toBe('0:00');
  });
});
