/** A relay's channel pool as tests look at it: GET /v1/admin/channels, its database rows, the funder. */
import { and, eq } from "drizzle-orm";
import { localFunder } from "../../src/boot/boot.ts";
import type { PoolView } from "../../src/features/pool/pool.model.ts";
import { channels } from "../../src/store/schema.ts";
import type { TestRelay } from "./relay.ts";

/** The default CHANNEL_STARTING_BALANCE: 10 XLM. */
export const STARTING = 100_000_000n;

/** The relay's embedded testnet. */
export const testnetOf = (r: TestRelay) => r.networks.get("testnet").localnet!;
/** The embedded network's funder (the pool creates and tops up channels from it). */
export const funderOf = (r: TestRelay) => localFunder(r.passphrase);
/** An account's balance on the embedded testnet (undefined: no such account). */
export const balanceOf = (r: TestRelay, id: string) => testnetOf(r).account(id)?.balance;

export async function poolView(r: TestRelay, network = "testnet"): Promise<PoolView> {
  const res = await r.admin("GET", `/channels?network=${network}`);
  if (res.status !== 200) throw new Error(`GET /channels: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as PoolView;
}

/** Polls GET /channels until the pool has `n` channels, all active (none creating or draining), and target `n`. */
export async function settled(
  r: TestRelay,
  n: number,
  ms = 15_000,
  seen?: (v: PoolView, at: number) => void,
): Promise<PoolView> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await poolView(r);
    seen?.(v, performance.now());
    if (v.target === n && v.current === n && v.channels.length === n && v.channels.every((c) => c.state === "active"))
      return v;
    if (Date.now() > end) throw new Error(`the pool did not settle at ${n} channels: ${JSON.stringify(v)}`);
    await Bun.sleep(25);
  }
}

/** A testnet channel's row in the relay's database. */
export async function channelRow(r: TestRelay, publicKey: string) {
  const [row] = await r.database
    .select()
    .from(channels)
    .where(and(eq(channels.network, "testnet"), eq(channels.publicKey, publicKey)));
  return row;
}
