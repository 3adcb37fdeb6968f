/**
 * Which webhook URLs the relay may call: http(s) only, and never a host that is or resolves to a
 * non-public address (loopback, RFC 1918, unique local fc00::/7, link-local with the cloud metadata
 * address 169.254.169.254, unspecified, CGNAT 100.64/10, multicast, reserved, documentation...):
 * checked at registration and again before each delivery, after DNS, unless WEBHOOK_ALLOW_PRIVATE.
 * IP ranges are ipaddr.js's: an address is public when its range is `unicast` (IPv4-mapped IPv6
 * addresses are judged as the IPv4 address they carry), and an IPv6 address also only within the
 * global unicast block 2000::/3: anything else (IPv4-compatible ::a.b.c.d, which a URL writes as
 * ::7f00:1, NAT64 prefixes, ...) is `notGlobalUnicast`.
 *
 * A delivery resolves the host once and connects to an address it checked (`resolveWebhookTarget`,
 * then `pinnedRequest`): were the request to resolve the name again, a DNS server answering a public
 * address to the check and 127.0.0.1 to the request (DNS rebinding) would send it to the relay's
 * own network.
 */
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";

/** Why a URL is refused: the VALIDATION_ERROR's details.reason at registration, a delivery's lastError after. */
export type UrlRefusal = "invalid_url" | "unsupported_scheme" | "private_address" | "unresolvable_host";

export class UrlRefused extends Error {
  constructor(
    readonly reason: UrlRefusal,
    message: string,
    readonly details: Record<string, string> = {},
  ) {
    super(message);
  }
}

const DNS_TIMEOUT_MS = 5000;

/** 2000::/3: the only IPv6 block with public unicast addresses. */
const GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3");

/** The range of a non-public address (`loopback`, `private`, `linkLocal`...), or null for a public one. */
export function nonPublicRange(address: string): string | null {
  if (!ipaddr.isValid(address)) return "invalid";
  const ip = ipaddr.process(address);
  const range = ip.range();
  if (range !== "unicast") return range;
  return ip.kind() === "ipv6" && !ip.match(GLOBAL_UNICAST) ? "notGlobalUnicast" : null;
}

/** The URL, parsed, when its scheme is http or https; throws UrlRefused otherwise. */
export function parseWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefused("invalid_url", "url: not an absolute URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new UrlRefused("unsupported_scheme", `url: only http and https URLs are allowed (got ${url.protocol})`, {
      scheme: url.protocol.replace(/:$/, ""),
    });
  return url;
}

/** Every address a host name resolves to; tests pass their own, to script what DNS answers. */
export type Lookup = (hostname: string) => Promise<string[]>;

/** The system's resolver (node:dns, in the order it gives). */
export const systemLookup: Lookup = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** A URL's host without the brackets of an IPv6 literal. */
const bareHost = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, "$1");

/** Every address a host resolves to (an IP literal is itself), within DNS_TIMEOUT_MS. */
async function addressesOf(host: string, resolve: Lookup): Promise<string[]> {
  if (ipaddr.isValid(host)) return [host];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`DNS lookup timed out after ${DNS_TIMEOUT_MS} ms`)), DNS_TIMEOUT_MS);
  });
  try {
    const found = await Promise.race([resolve(host), timeout]);
    if (!found.length) throw new Error("no address");
    return found;
  } catch (e) {
    throw new UrlRefused("unresolvable_host", `url: the host ${host} does not resolve (${(e as Error).message})`, {
      host,
    });
  } finally {
    clearTimeout(timer);
  }
}

/** Throws UrlRefused unless every address is public: one private address is enough to refuse the host. */
function refuseNonPublic(url: URL, addresses: string[]): void {
  for (const address of addresses) {
    const range = nonPublicRange(address);
    if (range !== null)
      throw new UrlRefused(
        "private_address",
        `url: ${url.hostname} is or resolves to a non-public address (${address}, ${range}); webhooks call public ` +
          "addresses only (WEBHOOK_ALLOW_PRIVATE=true lifts this, for tests and receivers on the relay's own network)",
        { address, range },
      );
  }
}

/**
 * Checks a webhook URL (scheme, then every address its host resolves to); throws UrlRefused. With
 * `allowPrivate` only the scheme is checked (a receiver on the relay's own network or machine).
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean, resolve = systemLookup): Promise<URL> {
  const url = parseWebhookUrl(raw);
  if (!allowPrivate) refuseNonPublic(url, await addressesOf(bareHost(url), resolve));
  return url;
}

/** A webhook URL and the address its request must connect to: one that was checked. */
export interface WebhookTarget {
  url: URL;
  /** The first address of the look-up: the one to connect to. */
  address: string;
  /** Every address of the look-up, in its order (all checked): the others, should `address` refuse the connection. */
  addresses?: string[];
}

/**
 * For a delivery: checks the URL as checkWebhookUrl does, from a single look-up, and picks the first
 * address of that look-up (with `allowPrivate` nothing is refused, but the request is pinned all the
 * same). Send the request with `pinnedRequest`, never to the URL's host name.
 */
export async function resolveWebhookTarget(
  raw: string,
  allowPrivate: boolean,
  resolve = systemLookup,
): Promise<WebhookTarget> {
  const url = parseWebhookUrl(raw);
  const addresses = await addressesOf(bareHost(url), resolve);
  if (!allowPrivate) refuseNonPublic(url, addresses);
  return { url, address: addresses[0] as string, addresses };
}

/** What fetch needs to send a request to a target's address while it still names the target's host. */
export interface PinnedRequest {
  /** The URL with the address in place of the host name (path, query, port and credentials kept). */
  url: string;
  /** The Host header the host name would have given (none for an IP literal: the URL has it). */
  headers: { host?: string };
  /** For https: the name sent in SNI and checked against the certificate, the URL's host name and not the address. */
  tls?: { serverName: string };
}

export function pinnedRequest({ url, address }: WebhookTarget): PinnedRequest {
  const host = bareHost(url);
  if (ipaddr.isValid(host)) return { url: url.href, headers: {} }; // an IP literal: no name to resolve again
  const pinned = new URL(url.href);
  pinned.hostname = address.includes(":") ? `[${address}]` : address;
  // URL ignores a hostname it cannot parse (an IPv6 zone, "fe80::1%eth0"): never fall back to the name
  if (!ipaddr.isValid(bareHost(pinned))) throw new Error(`cannot connect to ${address}: not an address a URL takes`);
  return {
    url: pinned.href,
    headers: { host: url.host },
    ...(url.protocol === "https:" ? { tls: { serverName: host } } : {}),
  };
}
