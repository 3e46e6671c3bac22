/**
 * How much of the corpora (src/incoming/parsers/corpus/*.tsv) the bank-message engine reads, per
 * bank and in total: the share of incoming lines whose amount is read, the share of recipient
 * digits read, and the false credits (a negative line read as money received under any hint).
 *
 *   npm run parsers:report              the table (Markdown, as README.md and docs/devices.md show it)
 *   npm run parsers:report -- --misses  and every line it misses, below the table
 */
import { hintsOf, readCorpus, reportTable, scoreCorpus } from '../src/incoming/parsers/corpus.js';
import { parseIncomingCredit } from '../src/incoming/parsers/index.js';

const samples = readCorpus();
console.log(reportTable(scoreCorpus(samples)));

if (process.argv.includes('--misses')) {
  console.log('');
  for (const s of samples) {
    const where = `${s.bank}.tsv:${s.line}`;
    const text = s.text.replace(/\n/g, ' ⏎ ');
    if (s.sign === '+' || s.sign === '?') {
      for (const hint of hintsOf(s)) {
        const r = parseIncomingCredit(s.text, hint);
        const digits = s.digits.split(':')[1];
        if (r?.amount !== s.amount || r.currency !== s.currency)
          console.log(`MISS   ${where} ${JSON.stringify(hint)} read ${r ? `${r.amount} ${r.currency}` : 'nothing'}: ${text}`);
        else if (digits && r.digits !== digits) console.log(`DIGITS ${where} ${JSON.stringify(hint)} read ${r.digits ?? 'none'} for ${digits}: ${text}`);
      }
    } else {
      const r = parseIncomingCredit(s.text, { sender: s.sender }) ?? parseIncomingCredit(s.text);
      if (r) console.log(`FALSE  ${where} credited ${r.amount} ${r.currency}: ${text}`);
    }
  }
}
