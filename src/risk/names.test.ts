import { describe, expect, it } from 'vitest';
import { nameSkeleton, namesMatch } from './names.js';

describe('nameSkeleton', () => {
  it('reduces Cyrillic and the usual Latin spellings of a name to one skeleton', () => {
    expect(nameSkeleton('Пётр')).toBe(nameSkeleton('Pyotr'));
    expect(nameSkeleton('Пётр')).toBe(nameSkeleton('Petr'));
    expect(nameSkeleton('Александр')).toBe(nameSkeleton('Alexander'));
    expect(nameSkeleton('Дмитрий')).toBe(nameSkeleton('Dmitriy'));
    expect(nameSkeleton('Дмитрий')).toBe(nameSkeleton('Dmitrij'));
    expect(nameSkeleton('Юлия')).toBe(nameSkeleton('Yulia'));
    expect(nameSkeleton('Хабибулла')).toBe(nameSkeleton('Khabibula'));
    expect(nameSkeleton('Елена')).toBe(nameSkeleton('Yelena'));
    expect(nameSkeleton('Сергей')).toBe(nameSkeleton('Sergey'));
    expect(nameSkeleton('Иван')).not.toBe(nameSkeleton('Пётр'));
  });
});

describe('namesMatch', () => {
  it('matches a bank’s "first name and surname initial" with the merchant’s full name, in either script and order', () => {
    expect(namesMatch('Иван И.', 'Ivan Ivanov')).toBe(true);
    expect(namesMatch('ИВАН И.', 'Иванов Иван')).toBe(true);
    expect(namesMatch('ИВАН ИВАНОВИЧ И.', 'Иван Иванов')).toBe(true);
    expect(namesMatch('ИВАН ИВАНОВИЧ И.', 'Ivan I.')).toBe(true);
    expect(namesMatch('Пётр С.', 'Pyotr Sidorov')).toBe(true);
    expect(namesMatch('МАРИНА АЛЕКСАНДРОВНА Д.', 'Marina Dmitrieva')).toBe(true);
    expect(namesMatch('Ivan', 'Иван И.')).toBe(true);
  });

  it('does not match another person', () => {
    expect(namesMatch('Пётр С.', 'Иван И.')).toBe(false);
    expect(namesMatch('Иван П.', 'Ivan Ivanov')).toBe(false);
    expect(namesMatch('Иван Петров', 'Иван Сидоров')).toBe(false);
    expect(namesMatch('МАРИНА АЛЕКСАНДРОВНА Д.', 'Maria Dmitrieva')).toBe(false);
  });

  it('has nothing to say without a name on either side', () => {
    expect(namesMatch(undefined, 'Иван И.')).toBeUndefined();
    expect(namesMatch('Иван И.', '')).toBeUndefined();
    expect(namesMatch('...', 'Иван И.')).toBeUndefined();
  });
});
