/**
 * Who counts as one anonymous client, for the anonymous tier's rate bucket and daily allowance and
 * for the count of wrong admin tokens: an IPv4 address, or an IPv6 address's /64 (one subscriber's
 * network: an ISP hands out at least a /64, and any host in it can use any of its 2^64 addresses,
 * so a limit per IPv6 address is no limit). An IPv4-mapped IPv6 address (::ffff:a.b.c.d, as a
 * dual-stack socket reports IPv4 clients) is its IPv4 address.
 */
import ipaddr from "ipaddr.js";

const IPV4 = /^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$/;

/** The key a client address is counted under: `a.b.c.d`, or `x:x:x:x::/64`; anything else as given. */
export function clientGroup(ip: string): string {
  if (IPV4.test(ip)) return ip; // the common case, without parsing (every anonymous request asks)
  if (!ipaddr.isValid(ip)) return ip;
  const addr = ipaddr.process(ip);
  if (addr.kind() === "ipv4") return addr.toString();
  const parts = (addr as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}
