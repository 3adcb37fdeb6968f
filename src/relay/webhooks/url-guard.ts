/**
 * Which webhook URLs the relay may call: http(s) only, and never a host that is or resolves to a
 * non-public address (loopback, RFC 1918, unique local fc00::/7, link-local with the cloud metadata
 * address 169.254.169.254, unspecified, CGNAT 100.64/10, multicast, reserved, documentation...):
 * checked at registration and again before each delivery, after DNS, unless WEBHOOK_ALLOW_PRIVATE.
 * IP ranges are ipaddr.js's: an address is public when its range is `unicast` (IPv4-mapped IPv6
 * addresses are judged as the IPv4 address they carry).
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

/** The range of a non-public address (`loopback`, `private`, `linkLocal`...), or null for a public one. */
export function nonPublicRange(address: string): string | null {
  if (!ipaddr.isValid(address)) return "invalid";
  const range = ipaddr.process(address).range();
  return range === "unicast" ? null : range;
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

/** Every address a host name resolves to (an IP literal is itself), within DNS_TIMEOUT_MS. */
async function addressesOf(hostname: string): Promise<string[]> {
  const host = hostname.replace(/^\[(.*)\]$/, "$1");
  if (ipaddr.isValid(host)) return [host];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`DNS lookup timed out after ${DNS_TIMEOUT_MS} ms`)), DNS_TIMEOUT_MS);
  });
  try {
    const found = await Promise.race([lookup(host, { all: true, verbatim: true }), timeout]);
    if (!found.length) throw new Error("no address");
    return found.map((a) => a.address);
  } catch (e) {
    throw new UrlRefused("unresolvable_host", `url: the host ${host} does not resolve (${(e as Error).message})`, {
      host,
    });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Checks a webhook URL (scheme, then every address its host resolves to); throws UrlRefused. With
 * `allowPrivate` only the scheme is checked (a receiver on the relay's own network or machine).
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  const url = parseWebhookUrl(raw);
  if (allowPrivate) return url;
  for (const address of await addressesOf(url.hostname)) {
    const range = nonPublicRange(address);
    if (range !== null)
      throw new UrlRefused(
        "private_address",
        `url: ${url.hostname} is or resolves to a non-public address (${address}, ${range}); webhooks call public addresses only`,
        { address, range },
      );
  }
  return url;
}
