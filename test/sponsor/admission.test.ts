/**
 * Admission built directly: the fee plan from a market, then the project's actor (the real
 * ProjectActors) checks the policy and reserves. What it ends with is a value: the reservation, or
 * the refusal (the policy, the credits), with nothing held for a refusal.
 */
import { expect, test } from "bun:test";
import { Account, Asset, Keypair, Networks, Operation, TransactionBuilder } from "@stellar/stellar-sdk";
import { createLogger } from "../../src/kernel/log.ts";
import { ProjectActors } from "../../src/features/projects/project-actors.ts";
import { ANONYMOUS_POLICY_DEFAULTS, PROJECT_POLICY_DEFAULTS } from "../../src/features/projects/rules/policy.ts";
import { MemoryCheckpoints } from "../../src/store/checkpoints.ts";
import { Admission } from "../../src/features/sponsor/admission.ts";
import { FeePlanner } from "../../src/features/tx/fee-plan.ts";
import { Intakes } from "../../src/features/sponsor/intake.ts";

const config = { anonymousPolicy: ANONYMOUS_POLICY_DEFAULTS, debounceMs: 0, maxAnonymousClients: 10 };
/** A mainnet gateway as the fee plan reads it: a quiet market at the base fee. */
const gateway = {
  name: "mainnet",
  passphrase: Networks.PUBLIC,
  market: async () => ({ recent: [], median: 100n, percentile: 100n }),
} as never;
const networks = { get: () => ({ name: "mainnet", passphrase: Networks.PUBLIC, gateway }) } as never;
const intakes = new Intakes({ networks, submissions: {}, runs: {}, admission: {}, settlement: {} } as never);

/** A signed payment's job and what admission checks, through intake. */
async function paymentJob() {
  const source = Keypair.random();
  const tx = new TransactionBuilder(new Account(source.publicKey(), "1"), {
    fee: "100",
    networkPassphrase: Networks.PUBLIC,
  })
    .addOperation(Operation.payment({ destination: Keypair.random().publicKey(), asset: Asset.native(), amount: "1" }))
    .setTimeout(0)
    .build();
  tx.sign(source);
  const taken = intakes.transaction(tx.toEnvelope().toXDR("base64"), "mainnet");
  if ("refused" in taken) throw new Error("refused");
  const prepared = await intakes.prepare(taken, {} as never);
  if (!("job" in prepared)) throw new Error("answered");
  return prepared;
}

async function admitting(balance: bigint, policy = {}) {
  const actors = new ProjectActors(new MemoryCheckpoints(), config, createLogger("silent"));
  const project = { id: "p", policy: { ...PROJECT_POLICY_DEFAULTS, ...policy }, status: "active" as const };
  const actor = await actors.start({ ...project, balance, spent: 0n });
  const payer = actors.payer(actor, "p", "project:p");
  const admission = new Admission({
    fees: new FeePlanner({ feePercentile: "p90", maxFeeRate: 10_000n }),
    maxFeeRate: 10_000n,
    submissions: { byInnerHash: async () => null },
  });
  const { job, wanted } = await paymentJob();
  const admitted = await admission.reserve(gateway, job, payer, wanted);
  const holds = actor.getSnapshot().context.holds.size;
  await actors.stop();
  return { admitted, holds };
}

test("a payment within the policy and the credits: reserved, the most it may pay held by the project", async () => {
  const { admitted, holds } = await admitting(10_000_000n);
  if ("refused" in admitted) throw new Error(JSON.stringify(admitted.refused));
  expect(admitted.reservation.credits).toBe(true); // mainnet charges credits
  // two operations (the fee-bump counts one more than the payment) at the most the relay bids (MAX_FEE_RATE)
  expect(admitted.reservation.grant).toBe(20_000n);
  expect(admitted.plan.floor).toBe(100n);
  expect(holds).toBe(1);
});

test("credits that cannot cover it: the refusal as a value, nothing held", async () => {
  const { admitted, holds } = await admitting(0n);
  expect("refused" in admitted && admitted.refused.kind === "failure" && admitted.refused.error.code).toBe(
    "INSUFFICIENT_CREDITS",
  );
  expect(holds).toBe(0);
});

test("an operation the policy does not allow: POLICY_VIOLATION as a value, nothing held", async () => {
  const { admitted, holds } = await admitting(10_000_000n, { allowedOperations: ["createAccount"] });
  if (!("refused" in admitted) || admitted.refused.kind !== "failure") throw new Error("admitted");
  expect(admitted.refused.error).toMatchObject({ code: "POLICY_VIOLATION", details: { rule: "allowedOperations" } });
  expect(holds).toBe(0);
});
