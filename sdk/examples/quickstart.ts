/**
 * Quickstart: the bank directory, the terminals and balance, a payment confirmed with a receipt
 * link, and a payout, against a running Kassir (`npm start` serves http://localhost:8080).
 *
 *   cd sdk
 *   KASSIR_API_KEY=<terminal api_key> KASSIR_SECRET_KEY=<merchant secret_key> npm run example
 *
 * KASSIR_URL overrides the address (it must be the service's PUBLIC_BASE_URL, which signatures
 * are checked against; KASSIR_PUBLIC_BASE_URL when you reach it by another address).
 */
import { KassirClient, KassirError } from '../src/index.js';

const apiKey = process.env.KASSIR_API_KEY;
const secretKey = process.env.KASSIR_SECRET_KEY;
if (!apiKey || !secretKey) {
  console.error("Set KASSIR_API_KEY (the terminal's api_key) and KASSIR_SECRET_KEY (the merchant's secret_key); see sdk/README.md.");
  process.exit(2);
}

const kassir = new KassirClient({
  baseUrl: process.env.KASSIR_URL ?? 'http://localhost:8080',
  publicBaseUrl: process.env.KASSIR_PUBLIC_BASE_URL,
  apiKey,
  secretKey,
});

async function main(): Promise<void> {
  const { banks } = await kassir.banks.list();
  console.log(
    `Directory: ${banks.length} banks and operators, e.g. ${banks
      .slice(0, 3)
      .map((bank) => `${bank.code} (${bank.name})`)
      .join(', ')}`,
  );

  const { terminals } = await kassir.terminals.list();
  for (const terminal of terminals) console.log(`Terminal ${terminal.name}: ${terminal.balance} USDT available, ${terminal.balance_frozen} frozen`);
  const balance = await kassir.balance.get();
  console.log(`Balance: ${balance.balance} ${balance.currency} available, ${balance.balance_frozen} frozen`);

  // A payment: the answer carries the requisites to show the payer, or the hosted page to send them to.
  try {
    const payment = await kassir.payments.create({ ext_id: `quickstart-${Date.now()}`, amount: 1500, currency: 'RUB', method: 'CARD' });
    console.log(
      `Payment ${payment.id} is ${payment.status}: pay ${payment.amount} ${payment.currency} to ${payment.requisites.type} ${payment.requisites.value}`,
    );
    console.log(`  or on the payment page: ${payment.payment_url} (valid until ${payment.valid_until})`);
    const confirmed = await kassir.payments.confirm(payment.id, { receipt_url: 'https://example.com/receipt.pdf' });
    console.log(`Confirmed: ${confirmed.message}`);
    console.log(`Read back by ext_id: ${(await kassir.payments.getByExtId(payment.ext_id)).status}`);
  } catch (err) {
    if (!(err instanceof KassirError && err.code === 'PAY_004')) throw err;
    // No rate for the currency yet, or no funded executor with a fitting requisite (docs/operator.md "Set up a merchant and take a payment").
    console.log(`No payment: PAY_004 ${err.message}`);
  }

  // A payout in RUB, reserved in USDT on the terminal of the API key.
  try {
    const payout = await kassir.payouts.create({
      ext_id: `quickstart-payout-${Date.now()}`,
      amount: 500,
      method: 'sbp',
      requisites: '+79001234567',
      holder_name: 'Ivan Petrov',
      bank: 'sberbank',
    });
    console.log(`Payout ${payout.id} is ${payout.status}`);
  } catch (err) {
    if (!(err instanceof KassirError)) throw err;
    // PAY_002 with data.available: the terminal's balance does not cover the reserve; UNAVAILABLE: no RUB rate set yet.
    console.log(`No payout: ${err.code} ${err.message}${err.data ? ` ${JSON.stringify(err.data)}` : ''}`);
  }

  const { payouts, total } = await kassir.payouts.list({ limit: 5 });
  console.log(`Payouts: ${total} in all; latest: ${payouts.map((payout) => `${payout.ext_id} ${payout.status}`).join(', ') || 'none'}`);
}

main().catch((err: unknown) => {
  if (!(err instanceof KassirError)) throw err;
  // AUTH_002 says what the service expected to be signed (data.signed_url): a different host or port
  // than its PUBLIC_BASE_URL is the usual cause — set KASSIR_PUBLIC_BASE_URL to it.
  console.error(`${err.code} ${err.message}${err.data ? ` ${JSON.stringify(err.data)}` : ''}`);
  process.exit(1);
});
