import { BlockList, isIP } from "node:net";
import { V4_SPECIAL_PURPOSE, V6_SPECIAL_PURPOSE, type SpecialRange } from "./special-purpose-ranges";

/**
 * The SSRF guard of http_fetch: a model-chosen URL must never reach the
 * runner's own network or any address that is not plain public unicast.
 * Refused: every range of the IANA IPv4 and IPv6 special-purpose address
 * registries and multicast (see special-purpose-ranges.ts), and in IPv6
 * anything outside global unicast 2000::/3 (so unassigned and deprecated
 * space such as site-local fec0::/10 is refused even if the registry moves).
 * IPv4 carried inside IPv6 in a form a host can still route (IPv4-mapped
 * ::ffff:0:0/96 and NAT64 64:ff9b::/96) is judged by its IPv4 address.
 * The check runs on every resolved address of every redirect hop, and the
 * connection is pinned to the checked address (no DNS rebinding window).
 */
const blockedV4 = blockList(V4_SPECIAL_PURPOSE, "ipv4");
const blockedV6 = blockList(V6_SPECIAL_PURPOSE, "ipv6");
const globalUnicastV6 = blockList([{ prefix: "2000::/3", name: "global unicast" }], "ipv6");

function blockList(ranges: readonly SpecialRange[], family: "ipv4" | "ipv6"): BlockList {
  const list = new BlockList();
  for (const { prefix } of ranges) {
    const [net, bits] = prefix.split("/");
    list.addSubnet(net!, Number(bits), family);
  }
  return list;
}

/** Host names that always mean "this machine" or a metadata service, whatever DNS says. */
const BLOCKED_HOSTNAMES = [/^localhost$/i, /\.localhost$/i, /^metadata\.google\.internal$/i, /^instance-data(\.ec2\.internal)?$/i];

export function isBlockedHostname(hostname: string): boolean {
  return BLOCKED_HOSTNAMES.some((pattern) => pattern.test(hostname.replace(/\.$/, "")));
}

/** True when the address is not a public unicast address. Anything unparseable is blocked. */
export function isBlockedAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const family = isIP(bare);
  if (family === 4) return blockedV4.check(bare, "ipv4");
  if (family !== 6) return true;
  const embedded = embeddedIPv4(bare);
  if (embedded) return blockedV4.check(embedded, "ipv4");
  return !globalUnicastV6.check(bare, "ipv6") || blockedV6.check(bare, "ipv6");
}

/**
 * The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or NAT64
 * well-known-prefix (64:ff9b::a.b.c.d) address. Other embeddings are refused
 * whole instead: IPv4-compatible ::a.b.c.d is deprecated, 6to4 2002::/16 and
 * Teredo 2001::/32 relay to hosts we cannot see, and the local-use NAT64
 * prefix 64:ff9b:1::/48 translates into the operator's own network.
 */
export function embeddedIPv4(address: string): string | undefined {
  const groups = expandIPv6(address);
  if (!groups) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zeros(0, 5) && groups[5] === 0xffff) return v4(groups[6]!, groups[7]!);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return v4(groups[6]!, groups[7]!);
  return undefined;
}

function expandIPv6(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1]!.split(".").map(Number);
    text = text.slice(0, -dotted[1]!.length) + `${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head, tail] = text.split("::");
  const parse = (part: string | undefined) => (part ? part.split(":").map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const groups = tail === undefined ? left : [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}
