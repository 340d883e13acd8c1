import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { V4_SPECIAL_PURPOSE, V6_SPECIAL_PURPOSE } from "../../shared/agent/tools/special-purpose-ranges";
import { embeddedIPv4, isBlockedAddress } from "../../shared/agent/tools/ssrf-guard";

/** Address arithmetic on BigInt, written independently of the guard so the tests check it. */
const V4_BITS = 32n;
const V6_BITS = 128n;

function v4ToInt(text: string): bigint {
  return text.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}
function intToV4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join(".");
}
function v6ToInt(text: string): bigint {
  const [head, tail] = text.split("::");
  const groups = (part?: string) => (part ? part.split(":") : []);
  const left = groups(head);
  const right = groups(tail);
  const all = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return all.reduce((acc, group) => (acc << 16n) | BigInt(parseInt(group, 16)), 0n);
}
function intToV6(value: bigint): string {
  return Array.from({ length: 8 }, (_, i) => ((value >> BigInt((7 - i) * 16)) & 0xffffn).toString(16)).join(":");
}

interface Span {
  first: bigint;
  last: bigint;
}
function span(prefix: string, bits: bigint, toInt: (text: string) => bigint): Span {
  const [net, len] = prefix.split("/");
  const hostBits = bits - BigInt(Number(len));
  const first = (toInt(net!) >> hostBits) << hostBits;
  return { first, last: first + (1n << hostBits) - 1n };
}

const v4Spans = V4_SPECIAL_PURPOSE.map((range) => ({ ...range, ...span(range.prefix, V4_BITS, v4ToInt) }));
const v6Spans = V6_SPECIAL_PURPOSE.map((range) => ({ ...range, ...span(range.prefix, V6_BITS, v6ToInt) }));
const inAnyV4 = (value: bigint) => v4Spans.some((s) => value >= s.first && value <= s.last);

describe("SSRF guard: every IANA IPv4 special-purpose range", () => {
  it.each(v4Spans)("refuses $prefix ($name): first, middle and last address", ({ first, last }) => {
    for (const value of [first, (first + last) / 2n, last]) expect(isBlockedAddress(intToV4(value)), intToV4(value)).toBe(true);
  });

  it.each(v4Spans)("allows the public neighbours of $prefix", ({ first, last }) => {
    for (const value of [first - 1n, last + 1n]) {
      if (value < 0n || value >= 1n << V4_BITS || inAnyV4(value)) continue;
      expect(isBlockedAddress(intToV4(value)), intToV4(value)).toBe(false);
    }
  });

  it("agrees with the table on arbitrary IPv4 addresses, bare and IPv4-mapped or NAT64 in IPv6", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << V4_BITS) - 1n }), (value) => {
        const text = intToV4(value);
        const expected = inAnyV4(value);
        expect(isBlockedAddress(text)).toBe(expected);
        expect(isBlockedAddress(`::ffff:${text}`)).toBe(expected);
        expect(isBlockedAddress(`64:ff9b::${text}`)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("SSRF guard: every IANA IPv6 special-purpose range", () => {
  it.each(v6Spans)("refuses $prefix ($name): first, middle and last address", ({ first, last }) => {
    for (const value of [first, (first + last) / 2n, last]) expect(isBlockedAddress(intToV6(value)), intToV6(value)).toBe(true);
  });

  it.each(["64:ff9b::7f00:1", "64:ff9b::10.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::808:808", "2002:808:808::1", "2002:0a00:0001::", "2001:0:4136:e378::1", "::8.8.8.8", "fec0::1", "feff::1", "ff02::1", "ff0e::1", "4000::1", "::2", "[::1]", "fe80::1%eth0"])(
    "refuses %s",
    (address) => expect(isBlockedAddress(address)).toBe(true),
  );

  it.each(["2606:4700:4700::1111", "2a00:1450:4001:80e::200e", "64:ff9b::8.8.8.8", "::ffff:8.8.8.8", "2001:4860:4860::8888", "2620:4f:8001::1"])(
    "allows public %s",
    (address) => expect(isBlockedAddress(address)).toBe(false),
  );

  it("refuses every IPv6 address outside global unicast 2000::/3", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << V6_BITS) - 1n }), (value) => {
        const text = intToV6(value);
        const embedded = embeddedIPv4(text);
        fc.pre(!embedded);
        if (value >> 125n !== 1n) expect(isBlockedAddress(text), text).toBe(true);
        const inTable = v6Spans.some((s) => value >= s.first && value <= s.last);
        if (inTable) expect(isBlockedAddress(text), text).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("reads IPv4 only where a host still routes it: IPv4-mapped and the NAT64 well-known prefix", () => {
    expect(embeddedIPv4("::ffff:10.1.2.3")).toBe("10.1.2.3");
    expect(embeddedIPv4("64:ff9b::0a00:0001")).toBe("10.0.0.1");
    expect(embeddedIPv4("2002:0a00:0001::")).toBeUndefined();
    expect(embeddedIPv4("::1.2.3.4")).toBeUndefined();
  });

  it("refuses anything that is not an address", () => {
    for (const text of ["not-an-ip", "", "1.2.3", "1.2.3.4.5", "::g", "999.1.1.1"]) expect(isBlockedAddress(text), text).toBe(true);
  });
});
