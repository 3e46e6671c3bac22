import net from 'node:net';

/** Why an address is off limits for webhooks; used to word the refusal. */
type ForbiddenKind = 'metadata' | 'loopback' | 'private' | 'link-local' | 'multicast' | 'reserved';

type Subnet = readonly [network: string, prefix: number];

interface Category {
  kind: ForbiddenKind;
  v4: readonly Subnet[];
  v6: readonly Subnet[];
}

// Order matters: the first category that matches names the refusal, so the narrow ones
// (metadata inside link-local, ::1 inside ::/96) come before the wide ones.
const CATEGORIES: readonly Category[] = [
  {
    kind: 'metadata',
    v4: [['169.254.169.254', 32]],
    v6: [['fd00:ec2::254', 128]], // AWS IMDS over IPv6
  },
  { kind: 'loopback', v4: [['127.0.0.0', 8]], v6: [['::1', 128]] },
  {
    kind: 'private',
    v4: [
      ['10.0.0.0', 8],
      ['172.16.0.0', 12],
      ['192.168.0.0', 16],
      ['100.64.0.0', 10],
    ], // last: CGNAT
    // fec0::/10 is the deprecated site-local range (RFC 3879), still private where it is in use.
    v6: [
      ['fc00::', 7],
      ['fec0::', 10],
    ],
  },
  { kind: 'link-local', v4: [['169.254.0.0', 16]], v6: [['fe80::', 10]] },
  { kind: 'multicast', v4: [['224.0.0.0', 4]], v6: [['ff00::', 8]] },
  {
    kind: 'reserved',
    v4: [
      ['0.0.0.0', 8],
      ['192.0.0.0', 24],
      ['192.0.2.0', 24],
      ['198.18.0.0', 15],
      ['198.51.100.0', 24],
      ['203.0.113.0', 24],
      ['240.0.0.0', 4], // includes 255.255.255.255
    ],
    v6: [
      // ::/96 is the unspecified address plus the deprecated IPv4-compatible form (::a.b.c.d),
      // which nothing legitimate uses and some stacks still route to the embedded IPv4.
      ['::', 96],
      ['2001:db8::', 32],
      // RFC 8215 local-use NAT64 is the operator's own translator: it can reach anything.
      ['64:ff9b:1::', 48],
    ],
  },
];

// IPv6 forms whose low 32 bits are an IPv4 address that the packet actually reaches:
// IPv4-mapped (what a dual-stack socket reports) and well-known-prefix NAT64 (RFC 6052).
// Each IPv4 rule is repeated under these prefixes so the embedded address is what gets judged.
const V4_EMBEDDING_PREFIXES = ['::ffff:', '64:ff9b::'];

const RULES: ReadonlyArray<readonly [ForbiddenKind, net.BlockList]> = CATEGORIES.map(({ kind, v4, v6 }) => {
  const list = new net.BlockList();
  for (const [network, prefix] of v4) {
    list.addSubnet(network, prefix, 'ipv4');
    for (const embedding of V4_EMBEDDING_PREFIXES) list.addSubnet(embedding + network, 96 + prefix, 'ipv6');
  }
  for (const [network, prefix] of v6) list.addSubnet(network, prefix, 'ipv6');
  return [kind, list] as const;
});

/**
 * The category that makes `ip` unsafe to send webhooks to, or undefined for a public address.
 * A string that is not an IP address counts as 'reserved': fail closed.
 */
function forbiddenKind(ip: string): ForbiddenKind | undefined {
  const family = net.isIP(ip);
  if (family === 0) return 'reserved';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return RULES.find(([, list]) => list.check(ip, type))?.[0];
}

/** True when `ip` is loopback, private, link-local, metadata, multicast or reserved (IPv4 or IPv6). */
export function isForbiddenAddress(ip: string): boolean {
  return forbiddenKind(ip) !== undefined;
}

/** The refusal wording, e.g. "10.0.0.5 is a private address"; undefined when `ip` is allowed. */
export function forbiddenReason(ip: string): string | undefined {
  const kind = forbiddenKind(ip);
  if (kind === undefined) return undefined;
  if (net.isIP(ip) === 0) return `${ip} is not an IP address`;
  return `${ip} is ${kind === 'metadata' ? 'a cloud metadata' : `a ${kind}`} address`;
}
