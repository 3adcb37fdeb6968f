/**
 * The relay's per-request stages run alone, each in a tight loop in this process: what each costs
 * when its code and data stay in the processor's caches (the least it can cost on this machine).
 */
import { Account, Asset, Keypair, Networks, Operation, TransactionBuilder } from "@stellar/stellar-sdk";
import { createActor } from "xstate";
import { ask } from "../../actors/ask.ts";
import { poolMachine, type AssignReply } from "../../actors/pool/pool.machine.ts";
import { type EachReply, projectMachine } from "../../actors/projects/project.machine.ts";
import { decodeTransaction } from "../../src/features/tx/decode.ts";
import { PROJECT_POLICY_DEFAULTS } from "../../src/features/projects/rules/policy.ts";
import { feeBumpBytes } from "../../src/stellar/envelope.ts";
import { fullBucket, take } from "../../actors/projects/rate-bucket.ts";

export interface StageCost {
  stage: string;
  us: number;
}

/** A stage: what one call does, and how many requests one call stands for (a turn's batch: 8). */
export interface Stage {
  stage: string;
  per: number;
  fn: (i: number) => unknown;
}

/** Microseconds per call of `fn`, the best of `rounds` rounds of `n` calls. */
async function perCall(n: number, fn: (i: number) => unknown, rounds = 5): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < rounds; r++) {
    const t = performance.now();
    for (let i = 0; i < n; i++) await fn(i);
    best = Math.min(best, ((performance.now() - t) * 1000) / n);
  }
  return best;
}

/** Each stage's microseconds per request. */
export async function stageCosts(n = 20_000): Promise<StageCost[]> {
  const costs: StageCost[] = [];
  for (const s of await stageList()) costs.push({ stage: s.stage, us: (await perCall(n / s.per, s.fn)) / s.per });
  return costs;
}

/** The stages, with what they work on made once: a signed payment, a project actor, a pool of eight channels. */
export async function stageList(): Promise<Stage[]> {
  const passphrase = Networks.PUBLIC;
  const user = Keypair.random();
  const tx = new TransactionBuilder(new Account(user.publicKey(), "1"), { fee: "100", networkPassphrase: passphrase })
    .addOperation(Operation.payment({ destination: Keypair.random().publicKey(), asset: Asset.native(), amount: "1" }))
    .setTimeout(60)
    .build();
  tx.sign(user);
  const b64 = tx.toEnvelope().toXDR("base64");
  const sponsor = Keypair.random();
  const decoded = decodeTransaction(b64, passphrase, { signatures: true, sorobanData: true });

  const policy = { ...PROJECT_POLICY_DEFAULTS, requestsPerSecond: 1e9, burst: 1e9 };
  const input = { projectId: "bench", policy, balance: 10n ** 18n, spent: 0n, now: Date.now() };
  let bucket = fullBucket(policy, Date.now());
  const project = createActor(projectMachine, { input }).start();
  const request = { operationTypes: ["payment"], contractIds: [], minFee: 200n, maxFee: 400n };
  const pool = createActor(poolMachine).start();
  for (let i = 0; i < 8; i++) {
    const channel = { publicKey: Keypair.random().publicKey(), balance: 10n ** 12n, reserve: 10n ** 7n, seq: 1n };
    pool.send({ type: "ADD", channel: { ...channel, state: "active" } });
  }
  const channels = pool.getSnapshot().context.channels;
  const body = JSON.stringify({ transaction: b64, network: "mainnet" });

  return [
    { stage: "JSON body parsed", per: 1, fn: () => JSON.parse(body) },
    {
      stage: "envelope decoded and checked",
      per: 1,
      fn: () => decodeTransaction(b64, passphrase, { signatures: true, sorobanData: true }),
    },
    {
      stage: "rate limit: a token from the bucket",
      per: 1,
      fn: () => {
        bucket = take(bucket, policy, Date.now()).bucket;
      },
    },
    {
      stage: "project actor: RESERVE (policy, credits)",
      per: 1,
      fn: (i) =>
        ask<EachReply>(project, {
          type: "RESERVE",
          id: `r${i}`,
          now: Date.now(),
          asks: [{ id: `r${i}`, credits: true, request }],
        }),
    },
    {
      stage: "project actor, 8 at once: RESERVE (per request)",
      per: 8,
      fn: (i) => {
        const asks = Array.from({ length: 8 }, (_, j) => ({ id: `s${i}.${j}`, credits: true, request }));
        return ask<EachReply>(project, { type: "RESERVE", id: `s${i}`, now: Date.now(), asks });
      },
    },
    {
      stage: "pool actor: ASSIGN, channel HOLD and RELEASE",
      per: 1,
      fn: async (i) => {
        const r = await ask<AssignReply>(pool, { type: "ASSIGN", id: `f${i}`, fees: [{ id: `f${i}`, fee: 400n }] });
        channels[r.publicKeys[0]!]!.send({ type: "RELEASE", ends: [{ id: `f${i}`, charged: 200n }] });
      },
    },
    {
      // a turn's requests: one ASSIGN for eight, the chosen channels' HOLDs, each lease's RELEASE
      stage: "pool actor, 8 at once: ASSIGN, HOLD and RELEASE (per request)",
      per: 8,
      fn: async (i) => {
        const fees = Array.from({ length: 8 }, (_, j) => ({ id: `g${i}.${j}`, fee: 400n }));
        const r = await ask<AssignReply>(pool, { type: "ASSIGN", id: `g${i}`, fees });
        const ends = new Map<string, { id: string; charged: bigint }[]>();
        for (const [j, pk] of r.publicKeys.entries())
          ends.set(pk!, [...(ends.get(pk!) ?? []), { id: fees[j]!.id, charged: 200n }]);
        for (const [pk, e] of ends) channels[pk]!.send({ type: "RELEASE", ends: e });
      },
    },
    {
      stage: "fee-bump built, hashed and signed",
      per: 1,
      fn: () => feeBumpBytes(decoded.inner, sponsor, 400n, passphrase),
    },
  ];
}
