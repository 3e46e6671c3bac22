/**
 * The payment page's words, in Russian and English. The payer reads these, not the API's
 * messages: plain sentences, no codes.
 */

export type Lang = 'ru' | 'en';
export const LANGS: readonly Lang[] = ['ru', 'en'];

// Languages of the countries whose requisites the service serves: their speakers read Russian
// far more often than English.
const RUSSIAN_READERS = new Set(['ru', 'uk', 'be', 'kk', 'ky', 'tg', 'uz', 'az', 'hy', 'ka', 'tt', 'ba']);

/**
 * `?lang=` wins (the visible switch); otherwise the best of `Accept-Language` by weight; Russian
 * when the header is absent, since most payers of the served countries read it.
 */
export function pickLang(query: unknown, acceptLanguage: string | undefined): Lang {
  if (query === 'ru' || query === 'en') return query;
  if (!acceptLanguage) return 'ru';
  const ranked = acceptLanguage
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const weight = q ? Number(q.slice(2)) : 1;
      return { base: tag.trim().toLowerCase().split('-')[0] ?? '', weight: Number.isFinite(weight) ? weight : 0, index };
    })
    .filter((entry) => entry.base !== '' && entry.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  for (const { base } of ranked) {
    if (base === 'ru' || base === 'en') return base;
    if (RUSSIAN_READERS.has(base)) return 'ru';
  }
  return ranked.length > 0 ? 'en' : 'ru';
}

/** Replaces `{name}` placeholders. */
export function fill(template: string, vars: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => vars[name] ?? whole);
}

const ru = {
  htmlTitle: 'Оплата {amount}',
  brand: 'Защищённая оплата',
  testBanner: 'ТЕСТ: тестовый платёж, настоящие деньги по этим реквизитам не переводятся',
  language: 'Язык',
  toPay: 'К оплате',
  orderAmount: 'Сумма заказа: {amount}',
  exactly: 'Переведите ровно эту сумму одним переводом — не больше и не меньше.',
  exactlyIn: 'Переведите ровно эту сумму в {currency} одним переводом — не больше и не меньше.',
  payWithin: 'Оплатите в течение',
  requisites: 'Реквизиты для перевода',
  cardNumber: 'Номер карты',
  phoneNumber: 'Номер телефона',
  simNumber: 'Номер абонента',
  bank: 'Банк получателя',
  operator: 'Оператор',
  holder: 'Получатель',
  holderHint: 'Банк покажет имя получателя — сверьте его перед переводом.',
  country: 'Страна',
  qr: 'QR-код для оплаты',
  qrAlt: 'QR-код для оплаты {amount}',
  qrHint: 'Отсканируйте код в приложении банка. Если платите с этого телефона — сделайте скриншот и выберите его в сканере QR («из галереи»).',
  qrData: 'Данные QR-кода',
  qrShow: 'Показать данные QR-кода',
  copy: 'Копировать',
  copyWhat: 'Копировать: {what}',
  amountLabel: 'сумму',
  copied: 'Скопировано',
  copyFailed: 'Не удалось скопировать — выделите текст и скопируйте вручную',
  howTo: 'Как оплатить',
  stepCard: 'Откройте приложение своего банка и выберите перевод по номеру карты.',
  stepSbp: 'Откройте приложение своего банка и выберите перевод по СБП — по номеру телефона. Банк получателя: {bank}.',
  stepPhone: 'Откройте приложение своего банка и выберите перевод по номеру телефона. Банк получателя: {bank}.',
  stepSim: 'Пополните баланс этого номера у оператора {bank} — в приложении банка или оператора.',
  stepQr: 'Откройте приложение своего банка и отсканируйте QR-код.',
  stepExact: 'Переведите ровно {amount} одним переводом. Если сумма будет другой или перевод разбит на части, платёж не найдётся автоматически.',
  stepConfirm: 'После перевода нажмите «Я оплатил» внизу страницы.',
  confirmTitle: 'Уже перевели?',
  confirmText: 'Нажмите кнопку после перевода. Приложите чек, если он есть, — так перевод найдётся быстрее.',
  receiptLabel: 'Чек или скриншот перевода (необязательно)',
  receiptHint: 'PNG, JPG, WEBP, HEIC или PDF, до 10 МБ',
  chooseFile: 'Выбрать файл',
  noFile: 'Файл не выбран',
  paid: 'Я оплатил',
  sending: 'Отправляем…',
  checkingTitle: 'Проверяем перевод',
  checkingText: 'Обычно это занимает несколько минут. Страница обновится сама — её не нужно перезагружать.',
  checkingRequisites: 'Если вы ещё не перевели деньги, реквизиты — ниже.',
  successTitle: 'Оплата получена',
  successText: 'Спасибо! Платёж на {amount} получен.',
  returnLink: 'Вернуться в магазин',
  closePage: 'Эту страницу можно закрыть.',
  expiredTitle: 'Время на оплату истекло',
  expiredText: 'Не переводите деньги по этим реквизитам. Если вы уже перевели, свяжитесь с магазином и отправьте ему чек.',
  unverifiedTitle: 'Перевод не найден',
  unverifiedText: 'Мы не нашли ваш перевод. Если вы оплатили, свяжитесь с магазином и отправьте ему чек — платёж проверят вручную.',
  cancelledTitle: 'Платёж отменён',
  cancelledText: 'Не переводите деньги по этому платежу. Если вы уже оплатили, свяжитесь с магазином.',
  disputeTitle: 'Платёж на проверке',
  disputeText: 'Мы проверяем ваш платёж и чек. Результат появится на этой странице.',
  noscript: 'Статус обновляется сам, когда в браузере включён JavaScript. Без него обновите страницу, чтобы увидеть текущий статус.',
  refresh: 'Обновить',
  safety: 'Никому не сообщайте коды из SMS и пароли от банка — их не спрашивают ни магазин, ни мы.',
  statusChanged: 'Статус платежа: {title}',
  errors: {
    PAY_008: 'Этот платёж уже не ждёт подтверждения. Показываем его текущий статус.',
    PAY_009: 'Файл больше 10 МБ. Выберите файл поменьше или сделайте скриншот.',
    PAY_010: 'Такой файл не подходит. Приложите PNG, JPG, WEBP, HEIC или PDF.',
    PAY_002: 'Не удалось прочитать форму. Попробуйте ещё раз — или отправьте без чека.',
    PAY_006: 'Платёж не найден. Проверьте ссылку.',
    PAYLOAD_TOO_LARGE: 'Файл больше 10 МБ. Выберите файл поменьше или сделайте скриншот.',
    RATE_LIMITED: 'Слишком много попыток. Подождите минуту и попробуйте снова.',
    NETWORK: 'Не получилось отправить. Проверьте интернет и попробуйте ещё раз.',
    INTERNAL: 'Что-то пошло не так на нашей стороне. Попробуйте ещё раз через минуту.',
  },
  notFoundTitle: 'Страница оплаты не найдена',
  notFoundText: 'Ссылка неверна или устарела. Вернитесь в магазин и начните оплату заново.',
  tooManyTitle: 'Слишком много запросов',
  tooManyText: 'Подождите минуту и обновите страницу.',
  failedTitle: 'Страница временно недоступна',
  failedText: 'Что-то пошло не так на нашей стороне. Обновите страницу через минуту.',
};

export type Texts = typeof ru;
export type ErrorText = keyof Texts['errors'];

const en: Texts = {
  htmlTitle: 'Payment of {amount}',
  brand: 'Secure payment',
  testBanner: 'TEST: a test payment; no real money is sent to these requisites',
  language: 'Language',
  toPay: 'Amount to pay',
  orderAmount: 'Order amount: {amount}',
  exactly: 'Transfer exactly this amount in one transfer — not more, not less.',
  exactlyIn: 'Transfer exactly this amount in {currency}, in one transfer — not more, not less.',
  payWithin: 'Pay within',
  requisites: 'Transfer details',
  cardNumber: 'Card number',
  phoneNumber: 'Phone number',
  simNumber: 'Mobile number',
  bank: "Recipient's bank",
  operator: 'Mobile operator',
  holder: 'Recipient',
  holderHint: "Your bank will show the recipient's name — check that it matches before you send.",
  country: 'Country',
  qr: 'QR code to pay',
  qrAlt: 'QR code to pay {amount}',
  qrHint: 'Scan the code in your banking app. Paying from this phone? Take a screenshot and pick it in the app\'s QR scanner ("from gallery").',
  qrData: 'QR code data',
  qrShow: 'Show the QR code data',
  copy: 'Copy',
  copyWhat: 'Copy: {what}',
  amountLabel: 'amount',
  copied: 'Copied',
  copyFailed: 'Could not copy — select the text and copy it by hand',
  howTo: 'How to pay',
  stepCard: 'Open your banking app and choose a transfer to a card number.',
  stepSbp: "Open your banking app and choose an SBP (Faster Payments) transfer by phone number. Recipient's bank: {bank}.",
  stepPhone: "Open your banking app and choose a transfer by phone number. Recipient's bank: {bank}.",
  stepSim: 'Top up the balance of this number with {bank} — in your banking or mobile operator app.',
  stepQr: 'Open your banking app and scan the QR code.',
  stepExact: 'Transfer exactly {amount} in one transfer. A different amount, or a payment split into parts, cannot be matched automatically.',
  stepConfirm: 'After the transfer, press "I paid" at the bottom of the page.',
  confirmTitle: 'Already paid?',
  confirmText: 'Press the button once you have made the transfer. Attach the receipt if you have one — it helps us find your transfer faster.',
  receiptLabel: 'Receipt or screenshot of the transfer (optional)',
  receiptHint: 'PNG, JPG, WEBP, HEIC or PDF, up to 10 MB',
  chooseFile: 'Choose a file',
  noFile: 'No file chosen',
  paid: 'I paid',
  sending: 'Sending…',
  checkingTitle: 'Checking your transfer',
  checkingText: 'This usually takes a few minutes. The page updates by itself — no need to reload it.',
  checkingRequisites: 'If you have not transferred the money yet, the details are below.',
  successTitle: 'Payment received',
  successText: 'Thank you! Your payment of {amount} has been received.',
  returnLink: 'Return to the store',
  closePage: 'You can close this page.',
  expiredTitle: 'The time to pay has run out',
  expiredText: 'Do not transfer money to these details. If you have already paid, contact the store and send them your receipt.',
  unverifiedTitle: 'Transfer not found',
  unverifiedText: 'We could not find your transfer. If you paid, contact the store and send them your receipt — the payment will be checked by hand.',
  cancelledTitle: 'Payment cancelled',
  cancelledText: 'Do not transfer money for this payment. If you have already paid, contact the store.',
  disputeTitle: 'Payment under review',
  disputeText: 'We are reviewing your payment and receipt. The result will appear on this page.',
  noscript: 'The status updates by itself when JavaScript is on. Without it, reload the page to see the current status.',
  refresh: 'Reload',
  safety: 'Never share SMS codes or bank passwords with anyone — neither the store nor we will ever ask for them.',
  statusChanged: 'Payment status: {title}',
  errors: {
    PAY_008: 'This payment no longer waits for confirmation. Showing its current status.',
    PAY_009: 'The file is larger than 10 MB. Choose a smaller file or take a screenshot.',
    PAY_010: 'This file type does not work here. Attach a PNG, JPG, WEBP, HEIC or PDF.',
    PAY_002: 'We could not read the form. Try again — or send it without a receipt.',
    PAY_006: 'Payment not found. Check the link.',
    PAYLOAD_TOO_LARGE: 'The file is larger than 10 MB. Choose a smaller file or take a screenshot.',
    RATE_LIMITED: 'Too many attempts. Wait a minute and try again.',
    NETWORK: 'Could not send. Check your connection and try again.',
    INTERNAL: 'Something went wrong on our side. Try again in a minute.',
  },
  notFoundTitle: 'Payment page not found',
  notFoundText: 'The link is wrong or out of date. Go back to the store and start the payment again.',
  tooManyTitle: 'Too many requests',
  tooManyText: 'Wait a minute and reload the page.',
  failedTitle: 'The page is unavailable for a moment',
  failedText: 'Something went wrong on our side. Reload the page in a minute.',
};

export const TEXTS: Record<Lang, Texts> = { ru, en };

/** The payer's sentence for an error code; anything unexpected reads as "our side". */
export function errorText(lang: Lang, code: string): string {
  const errors = TEXTS[lang].errors as Record<string, string>;
  return errors[code] ?? errors.INTERNAL!;
}

export function isErrorText(code: unknown): code is ErrorText {
  return typeof code === 'string' && Object.hasOwn(ru.errors, code);
}
