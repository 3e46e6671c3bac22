/**
 * Server-rendered HTML of the payment page. Everything needed to read the requisites is in the
 * HTML itself (no JavaScript needed); the script only adds copy buttons, the live countdown,
 * the in-place "I paid" upload and the live status. No inline script or style anywhere: the
 * Content-Security-Policy allows only the page's own files.
 */
import QRCode from 'qrcode';
import { countryName, formatAmount, formatCountdown, formatPhone, groupCard, phoneForCopy } from './format.js';
import { errorText, fill, LANGS, type Lang, TEXTS, type Texts } from './i18n.js';
import type { PagePaymentRow } from './pages.repo.js';
import { type PageState, pageState } from './pages.service.js';

/** A string that is already HTML; everything else interpolated into `html` is escaped. */
class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Part = Html | string | number | null | undefined | false | Part[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function part(value: Part): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(part).join('');
  return escapeHtml(String(value));
}

function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += part(value) + strings[i + 1]!;
  });
  return new Html(out);
}

/** The page's static files, by URL (content-hashed, so they can be cached for good). */
export interface AssetUrls {
  css: string;
  js: string;
  icon: string;
}

/** Which screens an element belongs to; the script toggles `hidden` by this list. */
function show(states: PageState[], current: PageState): Html {
  return html`data-show="${states.join(' ')}"${states.includes(current) ? '' : new Html(' hidden')}`;
}

const ICONS = {
  lock: '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path fill="currentColor" d="M12 2a5 5 0 0 0-5 5v3H6a2 2 0 0 0-2 2v8a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-8a2 2 0 0 0-2-2h-1V7a5 5 0 0 0-5-5Zm-3 5a3 3 0 1 1 6 0v3H9V7Zm3 7a2 2 0 0 1 1 3.73V19h-2v-1.27A2 2 0 0 1 12 14Z"/></svg>',
  copy: '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path fill="currentColor" d="M8 3a2 2 0 0 0-2 2v1H5a2 2 0 0 0-2 2v11a2 2 0 0 0 2 2h9a2 2 0 0 0 2-2v-1h1a2 2 0 0 0 2-2V5a2 2 0 0 0-2-2H8Zm0 2h9v11h-1V8a2 2 0 0 0-2-2H8V5ZM5 8h9v11H5V8Z"/></svg>',
  clock:
    '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path fill="currentColor" d="M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20Zm0 2a8 8 0 1 1 0 16 8 8 0 0 1 0-16Zm-1 3v6l5 3 1-1.7-4-2.4V7h-2Z"/></svg>',
  ok: '<svg viewBox="0 0 48 48" aria-hidden="true" focusable="false"><circle cx="24" cy="24" r="24" fill="currentColor"/><path fill="#fff" d="M20.5 31.6 13 24.1l2.8-2.8 4.7 4.7 11.7-11.7 2.8 2.8z"/></svg>',
  stop: '<svg viewBox="0 0 48 48" aria-hidden="true" focusable="false"><circle cx="24" cy="24" r="24" fill="currentColor"/><path fill="#fff" d="M22 12h4v16h-4zm0 20h4v4h-4z"/></svg>',
  wait: '<svg viewBox="0 0 48 48" aria-hidden="true" focusable="false"><circle cx="24" cy="24" r="24" fill="currentColor"/><path fill="#fff" d="M22 12h4v12.2l8 4.7-2 3.4-10-5.9z"/></svg>',
};

function icon(name: keyof typeof ICONS): Html {
  return new Html(ICONS[name]);
}

function copyButton(t: Texts, value: string, what: string): Html {
  // Hidden until the script runs: without JavaScript a button that does nothing would mislead.
  return html`<button type="button" class="copy" data-copy="${value}" aria-label="${fill(t.copyWhat, { what })}" hidden>${icon('copy')}<span>${t.copy}</span></button>`;
}

function field(
  t: Texts,
  id: string,
  label: string,
  value: Html | string,
  options: { copy?: string; mono?: boolean; hint?: string; copyLabel?: string } = {},
): Html {
  return html`<div class="field">
  <div class="field-head"><span class="field-label" id="l-${id}">${label}</span>${options.copy ? copyButton(t, options.copy, options.copyLabel ?? label.toLowerCase()) : ''}</div>
  <p class="field-value${options.mono ? ' mono' : ''}" id="v-${id}">${value}</p>${options.hint ? html`\n  <p class="hint">${options.hint}</p>` : ''}
</div>`;
}

export interface PageView {
  payment: PagePaymentRow;
  lang: Lang;
  /** The page's own path, `<mount>/<token>`; every link and request of the page is relative to it. */
  base: string;
  assets: AssetUrls;
  now: Date;
  /** A confirm error to show (the no-JavaScript form posts back here with `?error=`). */
  error?: string;
}

interface Amounts {
  /** What the payer transfers: `amount_local` in the requisites' currency for cross-border. */
  pay: { text: string; copy: string };
  /** The merchant's order amount, shown beside a cross-border local amount. */
  order?: { text: string };
  payCurrency: string;
}

function amounts(payment: PagePaymentRow, lang: Lang): Amounts {
  const order = formatAmount(payment.amount, payment.currency, lang);
  if (payment.cross_border) {
    const local = formatAmount(payment.payer_amount, payment.req_currency, lang);
    return { pay: local, order: payment.req_currency === payment.currency ? undefined : order, payCurrency: payment.req_currency };
  }
  return { pay: order, payCurrency: payment.currency };
}

function bankName(payment: PagePaymentRow): string | undefined {
  return payment.req_bank_name ?? payment.req_bank_code ?? undefined;
}

/** The requisites block by type (spec "Requisites": card, sbp, phone, sim, qr). */
async function requisites(t: Texts, lang: Lang, payment: PagePaymentRow, amount: string): Promise<Html> {
  const bank = bankName(payment);
  const rows: Html[] = [];
  switch (payment.req_type) {
    case 'card':
      rows.push(field(t, 'number', t.cardNumber, groupCard(payment.req_value), { copy: payment.req_value.replace(/\D/g, ''), mono: true }));
      break;
    case 'sbp':
    case 'phone':
      rows.push(field(t, 'number', t.phoneNumber, formatPhone(payment.req_value), { copy: phoneForCopy(payment.req_value), mono: true }));
      break;
    case 'sim':
      rows.push(field(t, 'number', t.simNumber, formatPhone(payment.req_value), { copy: phoneForCopy(payment.req_value), mono: true }));
      break;
    case 'qr': {
      const svg = await QRCode.toString(payment.req_value, { type: 'svg', errorCorrectionLevel: 'M', margin: 4, color: { dark: '#000000', light: '#ffffff' } });
      rows.push(html`<figure class="qr">
  <div class="qr-image" id="qr-image" role="img" aria-label="${fill(t.qrAlt, { amount })}">${new Html(svg.trim().replace('<svg ', '<svg aria-hidden="true" focusable="false" '))}</div>
  <figcaption class="hint">${t.qrHint}</figcaption>
</figure>
<details class="qr-data">
  <summary>${t.qrShow}</summary>
  ${field(t, 'qrdata', t.qrData, payment.req_value, { copy: payment.req_value, mono: true })}
</details>`);
      break;
    }
    default:
      rows.push(field(t, 'number', t.phoneNumber, payment.req_value, { copy: payment.req_value, mono: true }));
  }
  if (bank) rows.push(field(t, 'bank', payment.req_type === 'sim' ? t.operator : t.bank, bank));
  if (payment.req_holder) rows.push(field(t, 'holder', t.holder, payment.req_holder, { hint: payment.req_type === 'sim' ? undefined : t.holderHint }));
  if (payment.cross_border) rows.push(field(t, 'country', t.country, countryName(payment.req_country, lang)));
  return html`<section class="card" aria-labelledby="h-requisites">
  <h2 id="h-requisites">${t.requisites}</h2>
  ${rows}
</section>`;
}

function steps(t: Texts, payment: PagePaymentRow, amount: string): Html {
  const bank = bankName(payment) ?? '—';
  const first =
    {
      card: t.stepCard,
      sbp: fill(t.stepSbp, { bank }),
      phone: fill(t.stepPhone, { bank }),
      sim: fill(t.stepSim, { bank }),
      qr: t.stepQr,
    }[payment.req_type] ?? t.stepCard;
  return html`<section class="card" aria-labelledby="h-howto">
  <h2 id="h-howto">${t.howTo}</h2>
  <ol class="steps">
    <li>${first}</li>
    <li>${fill(t.stepExact, { amount })}</li>
    <li>${t.stepConfirm}</li>
  </ol>
</section>`;
}

function result(state: PageState, current: PageState, kind: 'ok' | 'stop' | 'wait', title: string, text: string, extra?: Html): Html {
  return html`<section class="card result result-${kind}" ${show([state], current)} aria-labelledby="h-${state}">
  <div class="result-icon">${icon(kind)}</div>
  <h2 id="h-${state}" tabindex="-1">${title}</h2>
  <p>${text}</p>${extra ?? ''}
</section>`;
}

function langSwitch(t: Texts, lang: Lang): Html {
  return html`<nav class="lang" aria-label="${t.language}">${LANGS.map(
    (l) => html`<a href="?lang=${l}" lang="${l}" hreflang="${l}"${l === lang ? new Html(' aria-current="true"') : ''}>${l.toUpperCase()}</a>`,
  )}</nav>`;
}

function head(lang: Lang, title: string, assets: AssetUrls, withScript: boolean): Html {
  return html`<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<meta name="color-scheme" content="light">
<title>${title}</title>
<link rel="icon" href="${assets.icon}" type="image/svg+xml">
<link rel="stylesheet" href="${assets.css}">${withScript ? html`\n<script src="${assets.js}" defer></script>` : ''}
</head>`;
}

/** The payment page for a payment in any state. */
export async function renderPage(view: PageView): Promise<string> {
  const { payment, lang, base, assets, now } = view;
  const t = TEXTS[lang];
  const state = pageState(payment, now);
  const sums = amounts(payment, lang);
  const live = state === 'pay' || state === 'checking';
  const msLeft = payment.valid_until.getTime() - now.getTime();
  const formError = view.error ? errorText(lang, view.error) : '';

  const returnLink = payment.return_url
    ? html`\n  <p><a class="button primary" href="${payment.return_url}" rel="noreferrer noopener">${t.returnLink}</a></p>`
    : html`\n  <p class="muted">${t.closePage}</p>`;
  // A payment that did not go through sends the payer back where the terminal says (its fail_url), when it says.
  const failLink = payment.fail_url
    ? html`\n  <p><a class="button primary" href="${payment.fail_url}" rel="noreferrer noopener">${t.returnLink}</a></p>`
    : undefined;

  const body = html`<body>
<main id="app" class="page" data-base="${base}" data-lang="${lang}" data-state="${state}" data-valid-until="${payment.valid_until.toISOString()}" data-server-time="${now.toISOString()}"
  data-t-copied="${t.copied}" data-t-copy-failed="${t.copyFailed}" data-t-sending="${t.sending}" data-t-status="${t.statusChanged}"
  data-e-pay_008="${t.errors.PAY_008}" data-e-pay_009="${t.errors.PAY_009}" data-e-pay_010="${t.errors.PAY_010}" data-e-network="${t.errors.NETWORK}" data-e-rate_limited="${t.errors.RATE_LIMITED}">
<header class="top">
  <p class="brand">${icon('lock')}<span>${t.brand}</span></p>
  ${langSwitch(t, lang)}
</header>
${payment.is_test ? html`<p class="test-banner" role="note">${t.testBanner}</p>` : ''}
<h1 class="sr-only">${fill(t.htmlTitle, { amount: sums.pay.text })}</h1>
<div id="announce" class="sr-only" role="status" aria-live="polite"></div>
${result('success', state, 'ok', t.successTitle, fill(t.successText, { amount: sums.pay.text }), returnLink)}
${result('expired', state, 'stop', t.expiredTitle, t.expiredText, failLink)}
${result('unverified', state, 'stop', t.unverifiedTitle, t.unverifiedText)}
${result('cancelled', state, 'stop', t.cancelledTitle, t.cancelledText, failLink)}
${result('dispute', state, 'wait', t.disputeTitle, t.disputeText)}
${live ? result('checking', state, 'wait', t.checkingTitle, t.checkingText, html`\n  <p class="muted">${t.checkingRequisites}</p>`) : ''}
${
  live
    ? html`<div class="live" ${show(['pay', 'checking'], state)}>
<section class="card amount-card" aria-labelledby="h-amount">
  <div class="field-head"><h2 id="h-amount" class="eyebrow">${t.toPay}</h2>${copyButton(t, sums.pay.copy, t.amountLabel)}</div>
  <p class="amount" id="amount">${sums.pay.text}</p>${sums.order ? html`\n  <p class="muted">${fill(t.orderAmount, { amount: sums.order.text })}</p>` : ''}
  <p class="note strong">${payment.cross_border ? fill(t.exactlyIn, { currency: sums.payCurrency }) : t.exactly}</p>
  <p class="timer" ${show(['pay'], state)}>${icon('clock')}<span>${t.payWithin}</span> <time id="countdown" role="timer" aria-live="off" datetime="${payment.valid_until.toISOString()}">${formatCountdown(msLeft)}</time></p>
</section>
${await requisites(t, lang, payment, sums.pay.text)}
${steps(t, payment, sums.pay.text)}
<section class="card" ${show(['pay'], state)} aria-labelledby="h-confirm">
  <h2 id="h-confirm">${t.confirmTitle}</h2>
  <p>${t.confirmText}</p>
  <form id="confirm-form" method="post" action="${base}/confirm?lang=${lang}" enctype="multipart/form-data" novalidate>
    <label class="file-label" for="receipt">${t.receiptLabel}</label>
    <input id="receipt" name="receipt" type="file" accept="image/png,image/jpeg,image/webp,image/heic,image/heif,application/pdf,.png,.jpg,.jpeg,.webp,.heic,.pdf" aria-describedby="receipt-hint form-error">
    <label class="file-ui" for="receipt" aria-hidden="true" hidden><span class="file-button">${t.chooseFile}</span><span class="file-name" id="receipt-name" data-empty="${t.noFile}">${t.noFile}</span></label>
    <p class="hint" id="receipt-hint">${t.receiptHint}</p>
    <p class="error" id="form-error" role="alert"${formError ? '' : new Html(' hidden')}>${formError}</p>
    <button type="submit" class="button primary" id="paid">${t.paid}</button>
  </form>
</section>
</div>`
    : ''
}
<noscript><p class="card muted">${t.noscript} <a href="?lang=${lang}">${t.refresh}</a></p></noscript>
<footer class="foot"><p>${t.safety}</p></footer>
</main>
</body>
</html>
`;
  return `${head(lang, fill(t.htmlTitle, { amount: sums.pay.text }), assets, true).value}\n${body.value}`;
}

/** A small page in both languages (the visitor's first): not found, too many requests, failure. */
export function renderMessage(kind: 'notFound' | 'tooMany' | 'failed', lang: Lang, assets: AssetUrls): string {
  const order: Lang[] = lang === 'ru' ? ['ru', 'en'] : ['en', 'ru'];
  const titleKey = `${kind}Title` as const;
  const textKey = `${kind}Text` as const;
  const first = TEXTS[order[0]!];
  const body = html`<body>
<main class="page message">
<header class="top"><p class="brand">${icon('lock')}<span>${first.brand}</span></p></header>
${order.map(
  (l, i) => html`<section class="card result result-stop" lang="${l}" aria-labelledby="h-${l}">
  ${i === 0 ? html`<div class="result-icon">${icon('stop')}</div>` : ''}
  ${i === 0 ? html`<h1 id="h-${l}">${TEXTS[l][titleKey]}</h1>` : html`<h2 id="h-${l}">${TEXTS[l][titleKey]}</h2>`}
  <p>${TEXTS[l][textKey]}</p>
</section>`,
)}
</main>
</body>
</html>
`;
  return `${head(order[0]!, `${TEXTS[order[0]!][titleKey]} · ${TEXTS[order[1]!][titleKey]}`, assets, false).value}\n${body.value}`;
}
