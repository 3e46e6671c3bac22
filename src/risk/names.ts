/**
 * Payer names compared the way a person would compare them (issue 36 item 4): a bank writes the
 * payer as "Иван И." or "ИВАН ИВАНОВИЧ И.", a merchant may send "Ivan Ivanov" or "Иванов Иван".
 * Both are reduced to a loose Latin skeleton (Cyrillic transliterated, the usual Latin spellings
 * of one Russian sound folded together), patronymics dropped, and the names match when every word
 * of the shorter one pairs with its own word of the longer: a whole word with an equal word, an
 * initial with a word or initial that starts with it. The check only ever flags a name that
 * clearly differs; anything it cannot read is no mismatch.
 */

const CYRILLIC: Record<string, string> = {
  а: 'a',
  б: 'b',
  в: 'v',
  г: 'g',
  д: 'd',
  е: 'e',
  ё: 'e',
  ж: 'zh',
  з: 'z',
  и: 'i',
  й: 'i',
  к: 'k',
  л: 'l',
  м: 'm',
  н: 'n',
  о: 'o',
  п: 'p',
  р: 'r',
  с: 's',
  т: 't',
  у: 'u',
  ф: 'f',
  х: 'h',
  ц: 'c',
  ч: 'ch',
  ш: 'sh',
  щ: 'sh',
  ъ: '',
  ы: 'i',
  ь: '',
  э: 'e',
  ю: 'iu',
  я: 'ia',
  // Kazakh and Tajik letters a payer's name may carry.
  ә: 'a',
  ғ: 'g',
  қ: 'k',
  ң: 'n',
  ө: 'o',
  ұ: 'u',
  ү: 'u',
  һ: 'h',
  і: 'i',
  ҳ: 'h',
  ҷ: 'zh',
  ӣ: 'i',
  ӯ: 'u',
};

/**
 * Latin spellings of one sound, longest first: "Pyotr" and "Пётр", "Aleksandr" and "Alexander",
 * "Dmitriy", "Dmitrij" and "Дмитрий", "Yulia" and "Юлия" reduce to the same skeleton.
 */
const FOLDS: [RegExp, string][] = [
  [/shch|sch/g, 'sh'],
  [/kh/g, 'h'],
  [/x/g, 'ks'],
  [/ts|tz/g, 'c'],
  [/[yj]o/g, 'e'],
  [/[yj]e/g, 'e'],
  [/[yj]/g, 'i'],
  [/w/g, 'v'],
  [/ck|q/g, 'k'],
  [/ph/g, 'f'],
  [/er\b/g, 'r'],
];

/** A name's word reduced to its skeleton ("Пётр" → "petr", "Aleksandr" → "aleksandr"). */
export function nameSkeleton(word: string): string {
  let s = word
    .toLowerCase()
    // "ё" and "й" lose their marks ("е", "и"), as do Latin letters with accents.
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '');
  s = [...s].map((c) => CYRILLIC[c] ?? c).join('');
  s = s.replace(/[^a-z]/g, '');
  for (const [pattern, to] of FOLDS) s = s.replace(pattern, to);
  // Doubled letters are spelled either way ("Алла", "Ala"; "Dmitrii", "Dmitri").
  return s.replace(/(.)\1+/g, '$1');
}

interface NameWord {
  key: string;
  initial: boolean;
}

const PATRONYMIC = /(?:ovich|evich|ovna|evna|ichna|ogli|kizi)$/;

/** A name's words, patronymics left out when a first name and a surname remain beside them. */
export function nameWords(name: string): NameWord[] {
  const words = name
    .split(/[\s.,]+/)
    .filter((w) => /\p{L}/u.test(w))
    .map((w) => ({ key: nameSkeleton(w), initial: [...w.replace(/[^\p{L}]/gu, '')].length === 1 }))
    .filter((w) => w.key !== '');
  if (words.length < 3) return words;
  const kept = words.filter((w) => w.initial || !PATRONYMIC.test(w.key));
  return kept.length >= 2 ? kept : words;
}

function fits(a: NameWord, b: NameWord): boolean {
  if (a.initial || b.initial) return a.key[0] === b.key[0];
  return a.key === b.key;
}

/** Whether every word of `short` pairs with its own word of `long`. */
function pairs(short: NameWord[], long: NameWord[], used: boolean[] = []): boolean {
  if (short.length === 0) return true;
  const [first, ...rest] = short;
  return long.some((word, i) => !used[i] && fits(first!, word) && pairs(rest, long, Object.assign([...used], { [i]: true })));
}

/**
 * Whether two payer names can be one person's; undefined when either has no word to compare
 * (no name: no check). Four words at most are compared on each side (a name is never longer).
 */
export function namesMatch(a: string | null | undefined, b: string | null | undefined): boolean | undefined {
  const left = nameWords(a ?? '').slice(0, 4);
  const right = nameWords(b ?? '').slice(0, 4);
  if (left.length === 0 || right.length === 0) return undefined;
  return left.length <= right.length ? pairs(left, right) : pairs(right, left);
}
