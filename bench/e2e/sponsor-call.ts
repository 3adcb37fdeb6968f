/** One POST /v1/sponsor from the load generator, reduced to what the benchmark counts. */
import type { RelayTarget } from "./protocol.ts";

export interface SponsorAnswer {
  /** HTTP status; 0 when the request itself failed (connection refused, reset, aborted). */
  status: number;
  /** `error.code` of an error answer (with `details.reason` when given), `fetch: <code or name>` for status 0, "" for a 200. */
  code: string;
  /** The ledger of a 200 answer, else 0. */
  ledger: number;
}

/** Sends a pre-built body (`{"transaction": …, "network": "mainnet"}`) with the project's key (and an idempotency key when `keyed`). */
export async function callSponsor(target: RelayTarget, body: string, signal?: AbortSignal): Promise<SponsorAnswer> {
  try {
    const res = await fetch(`${target.relayUrl}/v1/sponsor`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": target.apiKey,
        ...(target.keyed ? { "x-idempotency-key": crypto.randomUUID() } : {}),
      },
      body,
      signal,
    });
    const text = await res.text();
    let json: { ledger?: number; error?: { code?: string; details?: { reason?: string } } } = {};
    try {
      json = JSON.parse(text);
    } catch {
      /* not JSON: counted by status */
    }
    if (res.status === 200) return { status: 200, code: "", ledger: json.ledger ?? 0 };
    const reason = json.error?.details?.reason;
    return { status: res.status, code: `${json.error?.code ?? "NOT_JSON"}${reason ? ` (${reason})` : ""}`, ledger: 0 };
  } catch (e) {
    const code = (e as { code?: string }).code ?? (e instanceof Error ? e.name : "FETCH_ERROR");
    return { status: 0, code: `fetch: ${code}`, ledger: 0 };
  }
}

/** The request body for a base64 envelope. */
export const sponsorBody = (transaction: string) => JSON.stringify({ transaction, network: "mainnet" });
