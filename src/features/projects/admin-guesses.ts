/**
 * Wrong guesses at the admin token, per client IP (an IPv6 address's /64), wherever the token is asked for (the admin API's
 * bearer token and console sign-in, the channels protocol's adminSecret): one limiter counts them
 * all (src/features/console/console-session.ts, SignInLimiter). The right token always passes before this is
 * asked, so that whoever shares an address cannot lock the operator out.
 */
import { RelayError } from "../../kernel/errors.ts";
import { clientGroup } from "./client-group.ts";

export interface AdminGuesses {
  /** Seconds until `ip` may guess again; 0: it may now. */
  waitSeconds(ip: string): number;
  failed(ip: string): void;
}

/**
 * A request from `ip` without the right token: 429 RATE_LIMIT_EXCEEDED (with Retry-After) while
 * the address is locked out; else counted when it was a guess (`guessed`: a token was sent). The
 * caller then refuses it its own way.
 */
export function wrongAdminToken(guesses: AdminGuesses, address: string, guessed: boolean, what: string): void {
  const ip = clientGroup(address); // an IPv6 address's whole /64
  const wait = guesses.waitSeconds(ip);
  if (wait > 0)
    throw new RelayError(
      "RATE_LIMIT_EXCEEDED",
      `too many wrong ${what} from this address: try again in ${wait} s`,
      { reason: "sign_in_failures" },
      { retryAfter: wait },
    );
  if (guessed) guesses.failed(ip);
}
