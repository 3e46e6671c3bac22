import { type CallInput, type KassirClientOptions, type RequestOptions, Transport } from './http.js';
import type {
  AttachReceiptInput,
  Balance,
  BankDirectory,
  ConfirmPaymentInput,
  CreatePaymentParams,
  CreatePayoutParams,
  CreateTransferParams,
  CreateWithdrawalParams,
  DisputeCancelled,
  DisputeOpened,
  ListPayoutsQuery,
  ListWithdrawalsQuery,
  OpenDisputeInput,
  Payment,
  Payout,
  PayoutList,
  ReceiptAttached,
  ReceiptDownload,
  ReceiptFile,
  TerminalList,
  Transfer,
  Withdrawal,
  WithdrawalFee,
  WithdrawalList,
} from './types.js';

/**
 * The body of a call that takes a file or JSON (confirm, receipt, dispute): multipart/form-data with
 * the JSON fields in the `data` part when there is a file (spec: "`data` (string, JSON part)"), plain
 * JSON otherwise.
 */
function uploadBody(fields: Record<string, unknown>, file: ReceiptFile | undefined): Pick<CallInput, 'json' | 'multipart'> {
  const present = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  if (!file) return { json: present };
  const parts: Record<string, string> = Object.keys(present).length > 0 ? { data: JSON.stringify(present) } : {};
  return { multipart: { fields: parts, file } };
}

/** Pay-ins: create, read, confirm, receipts and disputes. */
export class Payments {
  constructor(private readonly http: Transport) {}

  /** Creates a payment and returns the requisites to pay to (`POST /v1/payments`). */
  create(body: CreatePaymentParams, options?: RequestOptions): Promise<Payment> {
    return this.http.call('payments.create', { json: body }, options);
  }

  /** A payment by its ID (`GET /v1/payments/{id}`); PAY_006 when there is none. */
  get(id: string, options?: RequestOptions): Promise<Payment> {
    return this.http.call('payments.get', { path: { id } }, options);
  }

  /** A payment by the merchant's order ID (`GET /v1/payments/by-ext-id/{extId}`). */
  getByExtId(extId: string, options?: RequestOptions): Promise<Payment> {
    return this.http.call('payments.getByExtId', { path: { extId } }, options);
  }

  /**
   * Signals that the payer has transferred (`POST /v1/payments/{id}/confirm`), optionally with a
   * receipt file (sent as multipart) or link. The status stays PENDING; PAY_008 when it is not.
   */
  confirm(id: string, input: ConfirmPaymentInput = {}, options?: RequestOptions): Promise<Payment> {
    return this.http.call('payments.confirm', { path: { id }, ...uploadBody({ receipt_url: input.receipt_url }, input.file) }, options);
  }

  /** Attaches a receipt file or link (`POST /v1/payments/{id}/receipt`); changes no status. */
  attachReceipt(id: string, input: AttachReceiptInput, options?: RequestOptions): Promise<ReceiptAttached> {
    return this.http.call('payments.attachReceipt', { path: { id }, ...uploadBody({ receipt_url: input.receipt_url }, input.file) }, options);
  }

  /** Opens a dispute on a CANCELLED or CANCELLED_APPEAL payment (`POST /v1/payments/{id}/dispute`). */
  openDispute(id: string, input: OpenDisputeInput = {}, options?: RequestOptions): Promise<DisputeOpened> {
    const { file, ...fields } = input;
    return this.http.call('payments.openDispute', { path: { id }, ...uploadBody(fields, file) }, options);
  }

  /** Cancels an open dispute (`POST /v1/payments/{id}/dispute/cancel`). */
  cancelDispute(id: string, options?: RequestOptions): Promise<DisputeCancelled> {
    return this.http.call('payments.cancelDispute', { path: { id } }, options);
  }
}

/** Receipt files stored by the service. */
export class Receipts {
  constructor(private readonly http: Transport) {}

  /**
   * Downloads a stored receipt (`GET /v1/receipts/{id}`). `id` is the receipt's ID, the last segment
   * of the `receipt_url` that `payments.attachReceipt` returns for an uploaded file.
   */
  download(id: string, options?: RequestOptions): Promise<ReceiptDownload> {
    return this.http.call('receipts.download', { path: { id }, binary: true }, options);
  }
}

/** Payouts in RUB to a card or by SBP. */
export class Payouts {
  constructor(private readonly http: Transport) {}

  /** Creates a payout and reserves its USDT on the key's terminal (`POST /v1/payouts`). */
  create(body: CreatePayoutParams, options?: RequestOptions): Promise<Payout> {
    return this.http.call('payouts.create', { json: body }, options);
  }

  /** A payout by its ID (`GET /v1/payouts/{id}`). */
  get(id: string, options?: RequestOptions): Promise<Payout> {
    return this.http.call('payouts.get', { path: { id } }, options);
  }

  /** A payout by the merchant's payout ID (`GET /v1/payouts/by-ext-id/{extId}`). */
  getByExtId(extId: string, options?: RequestOptions): Promise<Payout> {
    return this.http.call('payouts.getByExtId', { path: { extId } }, options);
  }

  /** One page of payouts (`GET /v1/payouts`), with the total count. */
  list(query: ListPayoutsQuery = {}, options?: RequestOptions): Promise<PayoutList> {
    return this.http.call('payouts.list', { query: { ...query } }, options);
  }

  /** Every payout matching `query`, page by page. */
  async *iterate(query: Omit<ListPayoutsQuery, 'offset'> = {}, options?: RequestOptions): AsyncGenerator<Payout> {
    for (let offset = 0; ; ) {
      const page = await this.list({ ...query, offset }, options);
      yield* page.payouts;
      offset += page.payouts.length;
      if (page.payouts.length === 0 || offset >= page.total) return;
    }
  }
}

/** USDT withdrawals from a terminal's balance to a TRC-20 wallet. */
export class Withdrawals {
  constructor(private readonly http: Transport) {}

  /** Creates a withdrawal; amount + fee (or amount) is frozen on the terminal (`POST /v1/withdrawals`). */
  create(body: CreateWithdrawalParams, options?: RequestOptions): Promise<Withdrawal> {
    return this.http.call('withdrawals.create', { json: body }, options);
  }

  /** A withdrawal by its ID (`GET /v1/withdrawals/{id}`); WDR_003 when there is none. */
  get(id: string, options?: RequestOptions): Promise<Withdrawal> {
    return this.http.call('withdrawals.get', { path: { id } }, options);
  }

  /** One page of withdrawals (`GET /v1/withdrawals`). */
  list(query: ListWithdrawalsQuery = {}, options?: RequestOptions): Promise<WithdrawalList> {
    return this.http.call('withdrawals.list', { query: { ...query } }, options);
  }

  /** Every withdrawal, page by page. */
  async *iterate(query: Omit<ListWithdrawalsQuery, 'offset'> = {}, options?: RequestOptions): AsyncGenerator<Withdrawal> {
    for (let offset = 0; ; ) {
      const page = await this.list({ ...query, offset }, options);
      yield* page.data;
      offset += page.data.length;
      if (page.data.length === 0 || page.data.length < page.limit) return;
    }
  }

  /** The current withdrawal fee of the key's terminal (`GET /v1/withdrawals/fee`). */
  fee(options?: RequestOptions): Promise<WithdrawalFee> {
    return this.http.call('withdrawals.fee', {}, options);
  }
}

/** The merchant's terminals and their USDT balances. */
export class Terminals {
  constructor(private readonly http: Transport) {}

  /** Every terminal of the merchant with its balances (`GET /v1/terminals`). */
  list(options?: RequestOptions): Promise<TerminalList> {
    return this.http.call('terminals.list', {}, options);
  }
}

/** Totals across the merchant's terminals. */
export class Balances {
  constructor(private readonly http: Transport) {}

  /** Available and frozen USDT across every terminal (`GET /v1/balance`). */
  get(options?: RequestOptions): Promise<Balance> {
    return this.http.call('balance.get', {}, options);
  }
}

/** USDT moves between terminals of one merchant. */
export class Transfers {
  constructor(private readonly http: Transport) {}

  /** Moves USDT between two of the merchant's terminals, atomically and without fee (`POST /v1/transfers`). */
  create(body: CreateTransferParams, options?: RequestOptions): Promise<Transfer> {
    return this.http.call('transfers.create', { json: body }, options);
  }
}

/** The public bank and operator directory. */
export class Banks {
  constructor(private readonly http: Transport) {}

  /** Active banks and operators, sorted by name (`GET /v1/public/banks`; unsigned). */
  list(options?: RequestOptions): Promise<BankDirectory> {
    return this.http.call('banks.list', {}, options);
  }
}

/**
 * A client of the Kassir merchant API for one terminal (its API key) of one merchant (its Secret
 * Key). Every call is signed as the spec requires; errors are thrown as KassirError.
 *
 * ```ts
 * const kassir = new KassirClient({ baseUrl: 'http://localhost:8080', apiKey, secretKey });
 * const payment = await kassir.payments.create({ ext_id: 'order-1', amount: 1500 });
 * ```
 */
export class KassirClient {
  readonly payments: Payments;
  readonly receipts: Receipts;
  readonly payouts: Payouts;
  readonly withdrawals: Withdrawals;
  readonly terminals: Terminals;
  readonly balance: Balances;
  readonly transfers: Transfers;
  readonly banks: Banks;

  constructor(options: KassirClientOptions) {
    const http = new Transport(options);
    this.payments = new Payments(http);
    this.receipts = new Receipts(http);
    this.payouts = new Payouts(http);
    this.withdrawals = new Withdrawals(http);
    this.terminals = new Terminals(http);
    this.balance = new Balances(http);
    this.transfers = new Transfers(http);
    this.banks = new Banks(http);
  }
}
