/**
 * Every entry of the IANA special-purpose address registries, as the SSRF
 * guard refuses them (https://www.iana.org/assignments/iana-ipv4-special-registry,
 * https://www.iana.org/assignments/iana-ipv6-special-registry), plus multicast.
 * Entries the registry marks "globally reachable" (AS112, AMT, anycast
 * relays) are refused too: none is a web page a model needs, and an
 * anycast service answers from wherever is nearest, which may be inside the
 * operator's network. The tests walk this table, so an added range is tested.
 */
export interface SpecialRange {
  prefix: string;
  name: string;
}

export const V4_SPECIAL_PURPOSE: readonly SpecialRange[] = [
  { prefix: "0.0.0.0/8", name: '"This network" (RFC 791), incl. 0.0.0.0/32 "this host"' },
  { prefix: "10.0.0.0/8", name: "Private-Use (RFC 1918)" },
  { prefix: "100.64.0.0/10", name: "Shared Address Space, carrier-grade NAT (RFC 6598)" },
  { prefix: "127.0.0.0/8", name: "Loopback (RFC 1122)" },
  { prefix: "169.254.0.0/16", name: "Link Local, cloud metadata (RFC 3927)" },
  { prefix: "172.16.0.0/12", name: "Private-Use (RFC 1918)" },
  { prefix: "192.0.0.0/24", name: "IETF Protocol Assignments, incl. DS-Lite 192.0.0.0/29, PCP/TURN anycast, NAT64 discovery (RFC 6890)" },
  { prefix: "192.0.2.0/24", name: "Documentation TEST-NET-1 (RFC 5737)" },
  { prefix: "192.31.196.0/24", name: "AS112-v4 (RFC 7535)" },
  { prefix: "192.52.193.0/24", name: "AMT (RFC 7450)" },
  { prefix: "192.88.99.0/24", name: "Deprecated 6to4 Relay Anycast (RFC 7526)" },
  { prefix: "192.168.0.0/16", name: "Private-Use (RFC 1918)" },
  { prefix: "192.175.48.0/24", name: "Direct Delegation AS112 Service (RFC 7534)" },
  { prefix: "198.18.0.0/15", name: "Benchmarking (RFC 2544)" },
  { prefix: "198.51.100.0/24", name: "Documentation TEST-NET-2 (RFC 5737)" },
  { prefix: "203.0.113.0/24", name: "Documentation TEST-NET-3 (RFC 5737)" },
  { prefix: "224.0.0.0/4", name: "Multicast (RFC 5771)" },
  { prefix: "240.0.0.0/4", name: "Reserved (RFC 1112)" },
  { prefix: "255.255.255.255/32", name: "Limited Broadcast (RFC 919)" },
];

/**
 * IPv6. `::ffff:0:0/96` (IPv4-mapped) and `64:ff9b::/96` (NAT64 well-known
 * prefix) are not listed: the guard judges their embedded IPv4 address.
 * Everything outside 2000::/3 is refused anyway; the entries below that
 * space are listed so the table documents them and the tests probe them.
 */
export const V6_SPECIAL_PURPOSE: readonly SpecialRange[] = [
  { prefix: "::/128", name: "Unspecified Address (RFC 4291)" },
  { prefix: "::1/128", name: "Loopback Address (RFC 4291)" },
  { prefix: "::/96", name: "Deprecated IPv4-Compatible (RFC 4291)" },
  { prefix: "64:ff9b:1::/48", name: "Local-use IPv4/IPv6 Translation (RFC 8215)" },
  { prefix: "100::/64", name: "Discard-Only Address Block (RFC 6666)" },
  { prefix: "100:0:0:1::/64", name: "Dummy IPv6 Prefix (RFC 9780)" },
  { prefix: "2001::/23", name: "IETF Protocol Assignments, incl. Teredo 2001::/32, benchmarking 2001:2::/48, AMT, AS112-v6, ORCHIDv2 (RFC 2928)" },
  { prefix: "2001:db8::/32", name: "Documentation (RFC 3849)" },
  { prefix: "2002::/16", name: "6to4 (RFC 3056)" },
  { prefix: "2620:4f:8000::/48", name: "Direct Delegation AS112 Service (RFC 7534)" },
  { prefix: "3fff::/20", name: "Documentation (RFC 9637)" },
  { prefix: "5f00::/16", name: "Segment Routing (SRv6) SIDs (RFC 9602)" },
  { prefix: "fc00::/7", name: "Unique-Local, incl. fd00:ec2::254 EC2 metadata (RFC 4193)" },
  { prefix: "fe80::/10", name: "Link-Local Unicast (RFC 4291)" },
  { prefix: "fec0::/10", name: "Deprecated Site-Local (RFC 3879)" },
  { prefix: "ff00::/8", name: "Multicast (RFC 4291)" },
];
