import type { Decimal } from 'decimal.js';
import { findBankAs } from '../banks/banks.repo.js';
import type { AppContext } from '../context.js';
import { type Tx, transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { payinHold } from '../ledger/credit.js';
import { pageToken, uuidv7 } from '../lib/ids.js';
import {
  COUNTRY_CURRENCY,
  CROSS_BORDER_METHODS,
  CURRENCY_COUNTRY,
  isMethod,
  isOrderCurrency,
  METHOD_TYPES,
  METHODS,
  METHODS_BY_CURRENCY,
  type Method,
  ORDER_CURRENCIES,
  type OrderCurrency,
} from '../lib/methods.js';
import { checkDecimal, minorUnits, money, roundTo } from '../lib/money.js';
import { isUuid } from '../lib/validators.js';
import type { MerchantIdentity } from '../merchants/identity.service.js';
import type { ProviderRow } from '../providers/providers.repo.js';
import { requestPayment, routesForPayment, tryRoutes } from '../providers/routing.js';
import { isUsable, staleRate, usableRates } from '../rates/quote.js';
import type { RiskHit, RiskRule } from '../risk/hits.repo.js';
import type { ClientLimit } from '../risk/velocity.repo.js';
import { checkWebhookUrl } from '../webhooks/sender.js';
import { type Candidate, candidatesFor, type NewPayment } from './cascade/cascade.js';
import * as cascade from './cascade/cascade.repo.js';
import * as repo from './payments.repo.js';
import type { CreatePaymentBody } from './payments.schemas.js';
import { testRequisites } from './test-requisites.js';

/** Spec "Limits": payment amount (RUB) 100 to 300,000. */
const RUB_MIN = 100;
const RUB_MAX = 300_000;
/** Attempts when two creates collide on one requisite and one amount (see insertPaymentWithCascade). */
const CASCADE_ATTEMPTS = 4;

function invalid(message: string, data?: Record<string, unknown>): never {
  throw new DomainError('PAY_002', message, data);
}

interface ValidCreate {
  extId: string;
  amount: Decimal;
  currency: OrderCurrency;
  method: Method;
  country: string | null;
  bank: string | null;
  clientId: string | null;
  notifyUrl: string | null;
  notificationToken: string | null;
  /** The payer's name as the merchant knows it (a Kassir extension), for the payer-name check. */
  payerName: string | null;
}

/** Every rule of the spec's POST /v1/payments that can be checked before touching the pool. */
async function validateCreate(ctx: AppContext, identity: MerchantIdentity, body: CreatePaymentBody): Promise<ValidCreate> {
  const terminalCurrency = identity.terminalCurrency;
  // Lenient reading of the spec's disagreement on cross-border `currency` (docs/merchant.md, Decisions): it is
  // optional for every method and defaults to the terminal's currency ("Default: the terminal's
  // currency"); when given it must be supported and equal the terminal's currency.
  const currency = (body.currency ?? terminalCurrency).toUpperCase();
  if (!isOrderCurrency(currency)) {
    invalid(`Unsupported currency ${body.currency}; use one of ${ORDER_CURRENCIES.join(', ')}`, { currency: body.currency });
  }
  if (currency !== terminalCurrency) {
    invalid(`Currency ${currency} differs from the terminal currency ${terminalCurrency}`, { currency, terminal_currency: terminalCurrency });
  }
  const method = (body.method ?? 'CARD').toUpperCase();
  if (!isMethod(method)) invalid(`Unsupported method ${body.method}; use one of ${METHODS.join(', ')}`, { method: body.method });
  if (!METHODS_BY_CURRENCY[currency].includes(method)) {
    invalid(`Method ${method} is not available for ${currency}; ${currency} takes ${METHODS_BY_CURRENCY[currency].join(', ')}`, { method, currency });
  }

  const amount = checkDecimal(
    body.amount,
    currency === 'RUB'
      ? { field: 'amount', places: minorUnits(currency), min: RUB_MIN, max: RUB_MAX }
      : { field: 'amount', places: minorUnits(currency), min: 0, minExclusive: true, max: '1e15', maxExclusive: true },
  );
  if (typeof amount === 'string') invalid(currency === 'RUB' ? `${amount} (RUB payments are 100 to 300000)` : amount);

  let country: string | null = null;
  if (body.country !== undefined && body.country !== '') {
    country = body.country.toUpperCase();
    if (!COUNTRY_CURRENCY[country]) {
      invalid(`Unsupported country ${body.country}; use one of ${Object.keys(COUNTRY_CURRENCY).join(', ')}`, { country: body.country });
    }
    if (!CROSS_BORDER_METHODS.has(method) && country !== CURRENCY_COUNTRY[currency]) {
      invalid(
        `Country ${country} does not fit method ${method}: its requisites are in ${CURRENCY_COUNTRY[currency]}; use a cross-border method to pay abroad`,
        { country },
      );
    }
    if (method === 'VIET_QR' && country !== 'VN') invalid(`Method VIET_QR pays requisites in VN, not ${country}`, { country });
  }

  let bank: string | null = null;
  if (body.bank !== undefined && body.bank !== '') {
    // A SIM payment tops up a phone account: its bank filter names the mobile operator.
    const operatorMethod = method === 'SIM' || method === 'CROSS_BORDER_SIM';
    const entry = await findBankAs(ctx.db, body.bank, operatorMethod ? 'operator' : 'bank');
    if (!entry) invalid(`Unknown bank code ${body.bank}; GET /v1/public/banks lists the codes`, { bank: body.bank });
    if (operatorMethod && entry.kind !== 'operator') {
      invalid(`For ${method}, bank must be a mobile operator code; ${body.bank} is a bank`, { bank: body.bank });
    }
    if (!operatorMethod && entry.kind === 'operator') {
      invalid(`${body.bank} is a mobile operator; operator codes are for CROSS_BORDER_SIM and SIM`, { bank: body.bank });
    }
    bank = entry.code;
  }

  // Without one of its own, the payment's webhooks go to its terminal's address (set by the operator, guarded the same way).
  let notifyUrl: string | null = identity.terminalNotifyUrl;
  if (body.notify_url !== undefined && body.notify_url !== '') {
    // The cheap, syntactic part of the SSRF guard; the real check is on the resolved address at
    // every delivery (src/webhooks/sender.ts).
    const problem = checkWebhookUrl(body.notify_url, ctx.config.webhookAllowPrivate);
    if (problem) invalid(`notify_url must be an absolute http(s) URL the service may call: ${problem}`, { notify_url: body.notify_url });
    notifyUrl = body.notify_url;
  }

  return {
    extId: body.ext_id,
    amount,
    currency,
    method,
    country,
    bank,
    clientId: body.client_id ?? null,
    notifyUrl,
    notificationToken: body.notification_token ?? null,
    payerName: body.payer_name?.trim() || null,
  };
}

/**
 * Creates a payment and hands out requisites (spec "POST /v1/payments"). The rate is fixed now
 * from the terminal's rate source. The terminal's routes are tried in order — its own executors
 * (the cascade) and upstream providers — until one gives requisites, within the route budget;
 * a terminal without routes uses the executors only. The terminal's rates and routes come with
 * the caller's identity (read and cached by authentication).
 */
export async function createPayment(ctx: AppContext, identity: MerchantIdentity, body: CreatePaymentBody): Promise<repo.PaymentView> {
  const input = await validateCreate(ctx, identity, body);
  // The risk rules (issue 36; DESIGN.md "Risk rules (contract)"): a blocked client_id, or one past
  // its velocity limit, "answers 503 PAY_004 and says nothing of why to the merchant" — the very
  // answer of an empty pool, so that the merchant cannot tell the two apart. The block is checked
  // here; the limit by every route's insert, under the payer's lock (ClientLimitReached).
  const risk = await ctx.risk.checkCreate({ merchantId: identity.merchantId, terminalId: identity.terminalId, clientId: input.clientId });
  if (risk.refused) refuseForRisk(ctx, identity, input, risk.refused.hit);
  try {
    const payment = await createValid(ctx, identity, input, risk.limit ?? null);
    if (input.payerName) await keepPayerName(ctx, identity, payment.id, input.payerName);
    // Counted in process once the payment's insert has committed (every route's insert is its own
    // transaction): no database round trip added to the create (docs/performance.md).
    // Test payments are no demand: the service's figures leave them out, as every report does.
    if (!identity.terminalTest) ctx.metrics.paymentCreated({ method: input.method, terminalId: identity.terminalId });
    return payment;
  } catch (err) {
    // Past the client_id limit, counted in the create's own transaction (payment_creation_facts).
    if (err instanceof ClientLimitReached) {
      const hit = ctx.risk.clientLimitHit(err.limit, err.window, {
        merchantId: identity.merchantId,
        terminalId: identity.terminalId,
        clientId: input.clientId!,
        amount: input.amount.toFixed(2),
        currency: input.currency,
      });
      refuseForRisk(ctx, identity, input, hit);
    }
    // Lost demand: a create refused for want of capacity is counted for the operator's dashboard.
    // After the refusal is decided, and outside every transaction of the create (all rolled back
    // by now); `record` neither waits nor throws, so the answer is the same without it. A
    // successful create never comes here.
    if (err instanceof DomainError && (err.key === 'PAY_004' || err.key === 'PAY_005') && !identity.terminalTest) {
      ctx.refusals.record({ ...refusalOf(identity, input, err.key), ...(err instanceof PoolRuleRefusal ? { riskRule: err.riskRule } : {}) });
    }
    throw err;
  }
}

/**
 * A create a risk rule refused (a blocked client_id, the client_id limit): the hit recorded, the
 * lost demand counted under its rule, and the pool's own PAY_004 answered. A test terminal's creates
 * pass the same rules (a merchant tries its integration against what live will answer), but are no
 * demand.
 */
function refuseForRisk(ctx: AppContext, identity: MerchantIdentity, input: ValidCreate, hit: RiskHit): never {
  ctx.refusals.recordHit(hit);
  if (!identity.terminalTest) ctx.refusals.record({ ...refusalOf(identity, input, 'PAY_004'), riskRule: hit.rule });
  throw noRequisites(input);
}

function refusalOf(identity: MerchantIdentity, input: ValidCreate, code: 'PAY_004' | 'PAY_005') {
  return {
    at: new Date(),
    merchantId: identity.merchantId,
    terminalId: identity.terminalId,
    code,
    method: input.method,
    bank: input.bank,
    currency: input.currency,
    amount: input.amount.toFixed(2),
  };
}

/**
 * The pool's own refusal: no requisites fit. A risk rule's refusal answers with this very error,
 * message and data alike, so that nothing in the answer tells the two apart.
 */
function noRequisites(input: Pick<ValidCreate, 'currency' | 'method' | 'country' | 'bank'>): DomainError {
  return new DomainError('PAY_004', 'No requisites are available for this currency, country, method and amount; retry later or try another method', {
    currency: input.currency,
    method: input.method,
    ...(input.country ? { country: input.country } : {}),
    ...(input.bank ? { bank: input.bank } : {}),
  });
}

/**
 * Keeps the payer's name the merchant sent, once the payment exists (every route inserts it in a
 * statement of its own; the name stays beside it, migration 049). It is evidence for a person,
 * never part of the payment: a failure to keep it must not turn a created payment into an error
 * the merchant would retry (PAY_003 then), so it is logged and the check simply has no name.
 */
async function keepPayerName(ctx: AppContext, identity: MerchantIdentity, paymentId: string, payerName: string): Promise<void> {
  try {
    await repo.insertPayerName(ctx.db, { paymentId, merchantId: identity.merchantId, payerName });
  } catch (err) {
    ctx.log.error({ err, payment: paymentId }, 'the payer name sent on create could not be kept; the payer-name check will not run for this payment');
  }
}

/** createPayment's work once the request is valid: the rate, then the terminal's routes in order. */
async function createValid(ctx: AppContext, identity: MerchantIdentity, input: ValidCreate, clientLimit: ClientLimit | null): Promise<repo.PaymentView> {
  const crossBorder = CROSS_BORDER_METHODS.has(input.method);
  const { routes } = identity;
  const quote = identity.rates.get(input.currency);
  if (!quote) {
    throw new DomainError('PAY_004', `Payments in ${input.currency} are not available: no USDT rate is set (operator: PUT /admin/v1/rates/${input.currency})`);
  }
  // A feed's rate is checked now, at use: stale, it refuses the currency (and nothing stands in for it).
  const now = Date.now();
  if (!isUsable(quote, now)) throw staleRate(input.currency, 'Payments');
  const localQuote = crossBorder && input.country ? identity.rates.get(COUNTRY_CURRENCY[input.country] ?? '') : undefined;
  if (localQuote && !isUsable(localQuote, now)) throw staleRate(COUNTRY_CURRENCY[input.country!]!, 'Payments');
  const rate = quote.rate;
  const rates = usableRates(identity.rates, now);
  const base: NewPaymentBase = {
    merchantId: identity.merchantId,
    terminalId: identity.terminalId,
    terminalName: identity.terminalName,
    extId: input.extId,
    amount: input.amount.toFixed(2),
    currency: input.currency,
    method: input.method,
    rate,
    rateRefreshId: quote.refreshId,
    payinRate: identity.payinRate,
    crossBorder,
    clientId: input.clientId,
    clientLimit,
    notifyUrl: input.notifyUrl,
    notificationToken: input.notificationToken,
    ttlSeconds: ctx.config.paymentTtlSeconds,
    hold: payinHold(input.amount, rate).toFixed(),
    types: METHOD_TYPES[input.method],
    bank: input.bank,
  };
  // A test terminal's payment (issue 33 item 4) goes to no route: its requisites are made up.
  if (identity.terminalTest) return createTestPayment(ctx, base, input, rates);
  const plan = (country: string | null) => candidatesFor({ method: input.method, orderCurrency: input.currency, amount: input.amount, country, rates });
  const executorRoute = routesForPayment(routes, input.currency, input.method).some((route) => route.provider === undefined);

  const created = await tryRoutes(ctx, routesForPayment(routes, input.currency, input.method), {
    executors: () => createWithExecutors(ctx, base, plan, input.country),
    provider: (provider, remainingMs) => createWithProvider(ctx, provider, base, { country: input.country, bank: input.bank }, remainingMs),
  });
  if (created) return created;
  const data = {
    currency: input.currency,
    method: input.method,
    ...(input.country ? { country: input.country } : {}),
    ...(input.bank ? { bank: input.bank } : {}),
  };
  const candidates = [...plan(input.country), ...(input.country ? plan(null) : [])];
  const shortfall = executorRoute && candidates.length > 0 ? await cascade.refusalShortfall(ctx.db, { ...base, candidates }) : undefined;
  // Requisites kept from this payer by the pool's risk rules: explained to the operator, never to the merchant.
  const poolRule = shortfall ? recordPoolRulesRefusal(ctx, base, shortfall) : undefined;
  if (poolRule) throw new PoolRuleRefusal(noRequisites(input), poolRule);
  // Requisites that fit but whose executors' deposits cannot back the payment: a pool nobody funded.
  if (shortfall && shortfall.uncovered > 0) {
    throw new DomainError(
      'PAY_004',
      `No requisites are available: those that fit belong to executors whose deposits cannot cover this payment's ${base.hold} USDT; retry later (operator: fund an executor with POST /admin/v1/executors/{id}/adjustments)`,
      { ...data, hold: Number(base.hold) },
    );
  }
  throw noRequisites(input);
}

/**
 * A create the cascade refused: when requisites would have fitted it but for its payer's traffic
 * class or the requisite velocity (migration 048), records why as risk hits ('traffic_class',
 * 'velocity') and answers the first rule; the merchant's answer stays the ordinary PAY_004, which says
 * nothing of the rules. Off the fast path: only for a create already refused, and a write only
 * when a rule did refuse it.
 */
function recordPoolRulesRefusal(ctx: AppContext, p: NewPaymentBase, shortfall: cascade.RefusalShortfall): RiskRule | undefined {
  const hits: RiskHit[] = [];
  const at = new Date();
  const inputs = { client_id: p.clientId, payer_class: shortfall.cls, method: p.method, amount: p.amount, currency: p.currency };
  const requisites = (n: number) => `${n} requisite${n === 1 ? '' : 's'}`;
  if (shortfall.classExcluded > 0) {
    hits.push({
      rule: 'traffic_class',
      action: 'refused',
      merchantId: p.merchantId,
      terminalId: p.terminalId,
      inputs: { ...inputs, requisites: shortfall.classExcluded, their_classes: shortfall.takenClasses },
      figure: `traffic_class ${shortfall.cls}: ${requisites(shortfall.classExcluded)} ${shortfall.classExcluded === 1 ? 'takes' : 'take'} only ${shortfall.takenClasses.join(', ')}`,
      at,
    });
  }
  if (shortfall.velocityExcluded > 0) {
    hits.push({
      rule: 'velocity',
      action: 'refused',
      merchantId: p.merchantId,
      terminalId: p.terminalId,
      inputs: { ...inputs, requisites: shortfall.velocityExcluded },
      figure: `velocity requisite: ${requisites(shortfall.velocityExcluded)} at ${shortfall.velocity}`,
      at,
    });
  }
  // Written as the client_id rules' hits are: in the background, batched (RefusalLog), never holding the answer.
  for (const hit of hits) ctx.refusals.recordHit(hit);
  return hits[0]?.rule;
}

/**
 * The pool's own answer (noRequisites, word for word) to a create the pool's risk rules refused;
 * the rule travels with it only as far as the lost-demand record, never into the answer.
 */
class PoolRuleRefusal extends DomainError {
  constructor(
    answer: DomainError,
    readonly riskRule: RiskRule,
  ) {
    super(answer.key, answer.message, answer.data);
  }
}

type NewPaymentBase = Omit<NewPayment, 'candidates' | 'pageToken'>;

/**
 * The rules every route shares: ext_id unique per merchant (PAY_003), the payer's client_id limit
 * (ClientLimitReached) and SAME_AMOUNT_LIMIT (PAY_005). Takes the terminal-and-amount lock, and
 * under a client_id limit the payer's, for the rest of `tx`.
 */
async function checkCreation(ctx: AppContext, tx: Tx, base: NewPaymentBase): Promise<void> {
  enforceCreationFacts(ctx, base, await cascade.creationFacts(tx, base));
}

/**
 * A create past its payer's client_id limit, as the facts found it under the payer's lock: thrown
 * out of the route that found it (every route checks the facts before it inserts), and answered by
 * createPayment as a risk refusal, the pool's own PAY_004.
 */
class ClientLimitReached extends Error {
  constructor(
    readonly limit: ClientLimit,
    readonly window: { count: number; sum: string },
  ) {
    super('the create would take its payer past the client_id velocity limit');
  }
}

function enforceCreationFacts(ctx: AppContext, base: NewPaymentBase, facts: cascade.CreationFacts): void {
  if (facts.ext_id_taken) throw repo.duplicateExtId(base.extId);
  if (facts.client_refused && base.clientLimit) {
    throw new ClientLimitReached(base.clientLimit, { count: facts.client_count ?? 0, sum: facts.client_sum ?? '0' });
  }
  if (facts.same_amount >= ctx.config.sameAmountLimit) {
    throw new DomainError(
      'PAY_005',
      `There are already ${facts.same_amount} pending payments of ${base.amount} ${base.currency} on this terminal; wait for one to finish or vary the amount`,
      { amount: Number(base.amount), pending: facts.same_amount },
    );
  }
}

/**
 * The internal route: the cascade over the executors' requisites, each attempt one statement
 * (its own transaction) that checks the rules, claims a requisite and inserts the payment.
 * Undefined when no requisite fits (the next route may take the payment).
 */
async function createWithExecutors(
  ctx: AppContext,
  base: NewPaymentBase,
  plan: (country: string | null) => Candidate[],
  country: string | null,
): Promise<repo.PaymentView | undefined> {
  let checked = false;
  const tryCountry = async (wanted: string | null) => {
    const candidates = plan(wanted);
    if (candidates.length === 0) return undefined;
    checked = true;
    const payment = { ...base, candidates, pageToken: pageToken() };
    // The LRU window first where it applies; then the whole pool, skipping held requisites;
    // then the whole pool again, waiting for them.
    const modes: cascade.CascadeMode[] = candidates.length === 1 && base.types.length === 1 ? ['window', 'all', 'wait'] : ['all', 'wait'];
    for (const mode of modes) {
      const outcome =
        mode === 'window' ? await ctx.creates.window(payment) : await cascade.insertPaymentWithCascade(ctx.db, payment, mode, ctx.config.sameAmountLimit);
      enforceCreationFacts(ctx, base, outcome.facts);
      if (outcome.payment) return outcome.payment;
    }
    return undefined;
  };
  for (let attempt = 1; ; attempt++) {
    try {
      let row = await tryCountry(country);
      // Cross-border rule 5: a non-ruble order with no requisites in the requested country is
      // routed as if no country were given.
      if (!row && base.crossBorder && country && base.currency !== 'RUB') row = await tryCountry(null);
      // Nowhere to look (no priced country): the shared rules still answer first (PAY_003, PAY_005).
      if (!checked) await transaction(ctx.db, (tx) => checkCreation(ctx, tx, base));
      return row;
    } catch (err) {
      // Another create took the same requisite for the same amount, or the last room under its
      // limits, between our look and our insert: look again with a fresh snapshot, which no
      // longer offers that requisite.
      if (repo.isRequisiteAmountTaken(err) || repo.isRequisiteLimitReached(err)) {
        if (attempt < CASCADE_ATTEMPTS) continue;
        // Every fitting requisite kept being taken for this amount by racing creates.
        return undefined;
      }
      throw err;
    }
  }
}

/**
 * A provider route: the shared rules first, so a duplicate ext_id or the same-amount limit answers
 * as usual without bothering the provider; then the provider is asked, and the payment it took is
 * recorded here with its requisites (the rules checked again, under the lock, in that insert's
 * transaction). Undefined when the provider did not take it.
 */
async function createWithProvider(
  ctx: AppContext,
  provider: ProviderRow,
  base: NewPaymentBase,
  options: { country: string | null; bank: string | null },
  remainingMs: number,
): Promise<repo.PaymentView | undefined> {
  await transaction(ctx.db, (tx) => checkCreation(ctx, tx, base));
  const paymentId = uuidv7();
  const answer = await requestPayment(
    ctx,
    provider,
    { paymentId, amount: base.amount, currency: base.currency, method: base.method, bank: options.bank, country: options.country, clientId: base.clientId },
    remainingMs,
  );
  if (!answer) return undefined;
  const { requisites } = answer;
  const payerAmount = requisites.amountLocal !== undefined ? roundTo(money(requisites.amountLocal), requisites.currency) : money(base.amount);
  await transaction(ctx.db, async (tx) => {
    await checkCreation(ctx, tx, base);
    await repo.insertProviderPayment(tx, {
      ...base,
      id: paymentId,
      pageToken: pageToken(),
      providerId: answer.providerId,
      providerPaymentId: answer.upstreamId,
      providerToken: answer.token,
      requisites: { ...requisites, payerAmount: payerAmount.toFixed(2) },
      providerValidUntil: answer.validUntil ?? null,
    });
  });
  return repo.findPayment(ctx.db, paymentId);
}

/**
 * A test terminal's payment: the shared rules first (PAY_003, PAY_005, as for a live one), then
 * the payment with test requisites from no executor (test-requisites.ts), in one transaction —
 * no requisite claimed, no deposit held, nothing posted. From here it lives the one lifecycle
 * (lifecycle.ts): it expires, is confirmed and disputed as any other, and its webhooks go out.
 */
async function createTestPayment(ctx: AppContext, base: NewPaymentBase, input: ValidCreate, rates: ReadonlyMap<string, string>): Promise<repo.PaymentView> {
  const paymentId = uuidv7();
  const requisites = testRequisites({
    method: input.method,
    currency: input.currency,
    amount: base.amount,
    country: input.country,
    crossBorder: base.crossBorder,
    rate: base.rate,
    rates,
  });
  await transaction(ctx.db, async (tx) => {
    await checkCreation(ctx, tx, base);
    await repo.insertTestPayment(tx, { ...base, id: paymentId, pageToken: pageToken(), requisites });
  });
  return (await repo.findPayment(ctx.db, paymentId))!;
}

/** GET /v1/payments/{id}: the merchant's own payment, or PAY_006. */
export async function getPayment(ctx: AppContext, merchantId: string, id: string): Promise<repo.PaymentRow> {
  const payment = isUuid(id) ? await repo.findMerchantPayment(ctx.db, merchantId, id) : undefined;
  if (!payment) throw new DomainError('PAY_006', `Payment ${id} not found`);
  return payment;
}

/** GET /v1/payments/by-ext-id/{extId}: the merchant's own payment, or PAY_006. */
export async function getPaymentByExtId(ctx: AppContext, merchantId: string, extId: string): Promise<repo.PaymentRow> {
  const payment = await repo.findMerchantPaymentByExtId(ctx.db, merchantId, extId);
  if (!payment) throw new DomainError('PAY_006', `Payment with ext_id ${extId} not found`);
  return payment;
}
