import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isForbiddenAddress } from './address-guard.js';
import { checkWebhookUrl, sendWebhook } from './sender.js';

interface Hit {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

const receivers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((close) => close()));
});

/** A real HTTP listener on 127.0.0.1 that records every request it gets. */
async function startReceiver(answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end('ok')) {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      hits.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  receivers.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${port}`, port, hits };
}

/** A port on 127.0.0.1 that nothing listens on any more. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const body = JSON.stringify({ event: 'payment.completed', id: 'e1', data: { amount: 1500.5, note: 'ünïcødé' } });
const headers = { 'X-Signature': 'c2lnbmF0dXJl', 'X-Event-Id': 'e1', 'X-Notification-Token': 'tok-123' };

describe('sendWebhook', () => {
  it('delivers the body and headers exactly, as a JSON POST, when private addresses are allowed', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(200).end('{"received":true}'));

    const result = await sendWebhook({ url: `${receiver.url}/hooks/kassir?shop=7`, body, headers, allowPrivate: true });

    expect(result).toMatchObject({ ok: true, status: 200, responseSnippet: '{"received":true}' });
    expect(result.error).toBeUndefined();
    expect(receiver.hits).toHaveLength(1);
    const [hit] = receiver.hits;
    expect(hit).toMatchObject({ method: 'POST', url: '/hooks/kassir?shop=7', body });
    expect(hit!.headers).toMatchObject({
      'content-type': 'application/json',
      'x-signature': 'c2lnbmF0dXJl',
      'x-event-id': 'e1',
      'x-notification-token': 'tok-123',
    });
  });

  it('refuses the same loopback URL when private addresses are not allowed, without the receiver seeing a request', async () => {
    const receiver = await startReceiver();
    // A delivery with the open policy first, so a pooled keep-alive socket to this receiver exists:
    // the guarded policy must not reuse it.
    expect((await sendWebhook({ url: receiver.url, body, headers, allowPrivate: true })).ok).toBe(true);

    const result = await sendWebhook({ url: `${receiver.url}/`, body, headers, allowPrivate: false });

    expect(result).toMatchObject({ ok: false, status: null, error: 'refused: 127.0.0.1 is a loopback address' });
    expect(receiver.hits).toHaveLength(1);
  });

  it('refuses a host name that resolves to loopback: the resolved addresses are judged, not the string', async () => {
    const receiver = await startReceiver();
    const url = `http://localhost:${receiver.port}/hook`;

    const refused = await sendWebhook({ url, body, headers, allowPrivate: false });
    expect(refused).toMatchObject({ ok: false, status: null });
    expect(refused.error).toMatch(/^refused: (127\.0\.0\.1|::1) is a loopback address \(from localhost\)$/);
    expect(receiver.hits).toHaveLength(0);

    // The same URL is reachable, so the refusal above is the guard and not a resolution failure.
    expect(await sendWebhook({ url, body, headers, allowPrivate: true })).toMatchObject({ ok: true, status: 200 });
    expect(receiver.hits).toHaveLength(1);
  });

  it('refuses IPv6 and IPv4-mapped loopback literals', async () => {
    const receiver = await startReceiver();
    for (const host of ['[::1]', '[::ffff:127.0.0.1]', '2130706433']) {
      const result = await sendWebhook({ url: `http://${host}:${receiver.port}/`, body, headers, allowPrivate: false });
      expect(result.ok, host).toBe(false);
      expect(result.error, host).toMatch(/^refused: .* is a loopback address$/);
    }
    expect(receiver.hits).toHaveLength(0);
  });

  it('does not follow a redirect: a 302 is a failed delivery and its target is never hit', async () => {
    const target = await startReceiver();
    const redirecting = await startReceiver((_req, res) => res.writeHead(302, { location: `${target.url}/elsewhere` }).end());

    const result = await sendWebhook({ url: redirecting.url, body, headers, allowPrivate: true });

    expect(result).toMatchObject({ ok: false, status: 302 });
    expect(result.error).toContain('302');
    expect(redirecting.hits).toHaveLength(1);
    expect(target.hits).toHaveLength(0);
  });

  it('gives up on a receiver that never answers and resolves ok:false', async () => {
    const silent = await startReceiver(() => {
      // Never answers; afterEach closes the connection.
    });

    const result = await sendWebhook({ url: silent.url, body, headers, timeoutMs: 500, allowPrivate: true });

    expect(result).toMatchObject({ ok: false, status: null, error: 'timeout after 500 ms' });
    expect(silent.hits).toHaveLength(1);
  });

  it('treats a 500 answer as a failed delivery and keeps the answer', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(500).end('database down'));

    const result = await sendWebhook({ url: receiver.url, body, headers, allowPrivate: true });

    expect(result).toMatchObject({ ok: false, status: 500, error: 'HTTP 500', responseSnippet: 'database down' });
  });

  it('treats any 2xx as delivered', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(204).end());

    expect(await sendWebhook({ url: receiver.url, body, headers, allowPrivate: true })).toMatchObject({
      ok: true,
      status: 204,
      responseSnippet: '',
    });
  });

  it('resolves ok:false on a closed port', async () => {
    const port = await closedPort();

    const result = await sendWebhook({ url: `http://127.0.0.1:${port}/`, body, headers, allowPrivate: true });

    expect(result).toMatchObject({ ok: false, status: null, error: 'connection refused' });
  });

  it('keeps only the first 1 KB of an endless answer and does not wait for its end', async () => {
    const chunk = 'x'.repeat(700);
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write(chunk), 5);
      res.on('close', () => clearInterval(timer));
      res.write(chunk);
    });

    // The default timeout (5 s) is far beyond the test's own: reading to the end would never finish.
    const result = await sendWebhook({ url: receiver.url, body, headers, allowPrivate: true });

    expect(result).toMatchObject({ ok: true, status: 200 });
    expect(result.responseSnippet).toBe('x'.repeat(1024));
  });

  it('refuses non-http schemes and credentials before any connection', async () => {
    const receiver = await startReceiver();
    const withCredentials = receiver.url.replace('http://', 'http://user:pass@');
    for (const url of ['ftp://127.0.0.1/x', 'file:///etc/passwd', withCredentials, 'not a url']) {
      const result = await sendWebhook({ url, body, headers, allowPrivate: true });
      expect(result.ok, url).toBe(false);
      expect(result.error, url).toMatch(/^refused: /);
    }
    expect(receiver.hits).toHaveLength(0);
  });
});

describe('checkWebhookUrl', () => {
  it('accepts http and https URLs with a public or named host', () => {
    for (const url of ['https://shop.example.com/hooks', 'http://shop.example.com:8080/a?b=c', 'https://8.8.8.8/x', 'https://[2606:4700:4700::1111]/']) {
      expect(checkWebhookUrl(url, false), url).toBeUndefined();
    }
  });

  it('refuses other schemes, credentials and unparsable URLs, whatever the private-address policy', () => {
    for (const allowPrivate of [false, true]) {
      expect(checkWebhookUrl('ftp://shop.example.com/x', allowPrivate)).toBe('the scheme must be http or https');
      expect(checkWebhookUrl('javascript:alert(1)', allowPrivate)).toBe('the scheme must be http or https');
      expect(checkWebhookUrl('https://user:pw@shop.example.com/', allowPrivate)).toBe('the URL must not carry credentials');
      expect(checkWebhookUrl('https://', allowPrivate)).toBe('not a valid URL');
    }
  });

  it('refuses forbidden IP literals and localhost unless private addresses are allowed', () => {
    const cases: Array<[string, string]> = [
      ['http://10.0.0.5/hook', '10.0.0.5 is a private address'],
      ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a cloud metadata address'],
      ['http://[::1]:3000/', '::1 is a loopback address'],
      ['http://[fd00:ec2::254]/', 'fd00:ec2::254 is a cloud metadata address'],
      // The URL parser normalises numeric host forms, so they cannot hide 127.0.0.1.
      ['http://2130706433/', '127.0.0.1 is a loopback address'],
      ['http://0x7f.1/', '127.0.0.1 is a loopback address'],
      ['http://localhost:8080/', 'localhost is a loopback address'],
      ['http://api.localhost/', 'api.localhost is a loopback address'],
    ];
    for (const [url, reason] of cases) {
      expect(checkWebhookUrl(url, false), url).toBe(reason);
      expect(checkWebhookUrl(url, true), url).toBeUndefined();
    }
  });
});

describe('isForbiddenAddress', () => {
  // First and last address of each range, plus named members where they matter.
  const forbidden: Record<string, string[]> = {
    '0.0.0.0/8': ['0.0.0.0', '0.255.255.255'],
    '10/8': ['10.0.0.0', '10.0.0.5', '10.255.255.255'],
    '100.64/10 CGNAT': ['100.64.0.0', '100.127.255.255'],
    '127/8': ['127.0.0.1', '127.255.255.254'],
    '169.254/16 link-local and metadata': ['169.254.0.1', '169.254.169.254', '169.254.255.255'],
    '172.16/12': ['172.16.0.0', '172.31.255.255'],
    '192.0.0/24': ['192.0.0.0', '192.0.0.255'],
    '192.0.2/24': ['192.0.2.0', '192.0.2.255'],
    '192.168/16': ['192.168.0.0', '192.168.255.255'],
    '198.18/15': ['198.18.0.0', '198.19.255.255'],
    '198.51.100/24': ['198.51.100.0', '198.51.100.255'],
    '203.0.113/24': ['203.0.113.0', '203.0.113.255'],
    '224/4 multicast': ['224.0.0.1', '239.255.255.255'],
    '240/4': ['240.0.0.0', '254.255.255.255'],
    broadcast: ['255.255.255.255'],
    '::': ['::'],
    '::1': ['::1'],
    'fc00::/7': ['fc00::', 'fd12:3456::1', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
    'fe80::/10': ['fe80::1', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'fe80::1%eth0'],
    'fec0::/10 deprecated site-local': ['fec0::1', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
    'ff00::/8': ['ff00::', 'ff02::1', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
    'IPv4-mapped forbidden v4': ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.5', '::ffff:169.254.169.254', '::FFFF:192.168.1.1'],
    'NAT64 of forbidden v4': ['64:ff9b::127.0.0.1', '64:ff9b::a9fe:a9fe', '64:ff9b::a00:5', '64:ff9b::c0a8:101'],
    '2001:db8::/32': ['2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'],
    'AWS metadata v6': ['fd00:ec2::254'],
    'not an address (fail closed)': ['', 'localhost', '10.0.0', '1.2.3.4.5', '::g'],
  };
  for (const [range, addresses] of Object.entries(forbidden)) {
    it(`forbids ${range}`, () => {
      for (const ip of addresses) expect(isForbiddenAddress(ip), ip).toBe(true);
    });
  }

  it('allows public addresses, including ones just outside the forbidden ranges', () => {
    const allowed = [
      '8.8.8.8',
      '1.1.1.1',
      '2606:4700:4700::1111',
      '2a00:1450:4001:80b::200e',
      '9.255.255.255',
      '11.0.0.0',
      '100.63.255.255',
      '100.128.0.0',
      '126.255.255.255',
      '128.0.0.0',
      '169.253.255.255',
      '169.255.0.0',
      '172.15.255.255',
      '172.32.0.0',
      '192.0.1.0',
      '192.0.3.0',
      '192.167.255.255',
      '192.169.0.0',
      '198.17.255.255',
      '198.20.0.0',
      '223.255.255.255',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '2001:db9::1',
      'fbff:ffff::1',
    ];
    for (const ip of allowed) expect(isForbiddenAddress(ip), ip).toBe(false);
  });
});
