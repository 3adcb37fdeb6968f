/**
 * Settlement built directly on a database (PGlite; Postgres too when TEST_DATABASE_URL is set): what a
 * send ended with, closed by the one code that writes outcomes. A refusal before anything was written
 * is kept as a rejected (or expired) submission; a rejection after an intent is recorded and the
 * reservation given back as the journal did; a 504 leaves the intent and the reservation as they are.
 */
import { expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { storeDatabases, TEST_DATABASE_URL } from "../support/databases.ts";
import { SubmissionsRepo } from "../../src/store/submissions.repo.ts";
import { sentIntent } from "../support/intents.ts";
import { ParkedLeases, Settlement } from "../../src/features/sponsor/settlement.ts";
import { expired, outcomeOf, submissionFailed, timedOut } from "../../src/features/sponsor/outcomes.ts";
import type { Attempt } from "../../src/features/sponsor/attempt.ts";
import type { Outcome } from "../../src/store/types.ts";
import { RelayError } from "../../src/kernel/errors.ts";
import { Ordering } from "../../src/features/sponsor/order/ordering.ts";
import { DEFAULT_ORDER_LIMITS } from "../../src/features/sponsor/order/holds.ts";
import { createLogger } from "../../src/kernel/log.ts";
import { xdr } from "@stellar/stellar-sdk";

const open = storeDatabases("settlement-close");
const badAuth = new xdr.TransactionResult({
  feeCharged: xdr.Int64.fromString("100"),
  result: xdr.TransactionResultResult.txBadAuth(),
  ext: xdr.TransactionResultExt.v0(),
}).toXDR("base64");

for (const kind of ["pglite", "postgres"] as const)
  test.skipIf(kind === "postgres" && !TEST_DATABASE_URL)(`${kind}: what a send ended with is closed`, async () => {
    const d = await open(kind);
    try {
      const repo = new SubmissionsRepo(d.db, 1);
      await d.db.execute(sql`insert into projects (id, name) values ('p', 'p')`);
      const settlement = new Settlement(
        {
          submissions: repo,
          networks: { find: () => undefined } as never,
          projects: { settleJournaled() {} },
          shared: false,
          log: createLogger("silent"),
          ordering: new Ordering(DEFAULT_ORDER_LIMITS, createLogger("silent")),
        },
        new ParkedLeases(),
      );
      const settled: { id: string; released: bigint; charged: bigint }[] = [];
      const attempt = (innerHash: string, journaled: boolean): Attempt =>
        ({
          network: { name: "mainnet" },
          job: { innerHash },
          reservation: {
            id: `reservation-${innerHash}`,
            payer: {
              projectId: "p",
              scope: "project:p",
              settle: (id: string, s: { released: bigint; charged: bigint }) => settled.push({ id, ...s }),
            },
            credits: true,
            grant: 1_000n,
            journaled,
            done: false,
          },
          row: { id: crypto.randomUUID(), resume: null, fresh: !journaled },
        }) as never;
      /** The intent of a fee-bump of `innerHash`, its reservation of 1,000 stroops journaled. */
      const intent = (id: string, innerHash: string) =>
        repo.recordIntent(sentIntent(id, innerHash, "p", 1_000n), 1_000n, true);
      const statusOf = async (innerHash: string) => (await repo.byInnerHash("mainnet", innerHash))?.status;

      // refused before anything was written: kept as a rejected submission, to be looked up
      const policy = outcomeOf(new RelayError("SPONSORSHIP_DENIED", "no", { reason: "denied" }));
      expect(await settlement.close(attempt("refused", false), true, policy)).toEqual(policy);
      expect(await statusOf("refused")).toBe("rejected");
      expect((await repo.byInnerHash("mainnet", "refused"))?.outcome).toEqual(policy);

      // its bounds passed before it was sent: kept as an expired submission
      const bounds = { maxTime: 1n, maxLedger: 0 };
      await settlement.close(attempt("late", false), true, outcomeOf(expired("late", null, 9, bounds)));
      expect(await statusOf("late")).toBe("expired");

      // an intent written (its reservation journaled), then rejected by the network: recorded, given back
      const sent = attempt("sent", true);
      await intent(sent.row.id, "sent");
      const rejected: Outcome = outcomeOf(submissionFailed("sent-outer", badAuth));
      await settlement.close(sent, false, rejected);
      expect(await statusOf("sent")).toBe("rejected");
      expect(settled).toEqual([
        { id: "reservation-sent", projectId: "p", released: 1_000n, charged: 0n, journaled: true },
      ] as never);

      // not known yet (504): the intent stays for a retry or recovery, and so does the reservation
      const waiting = attempt("waiting", true);
      await intent(waiting.row.id, "waiting");
      await settlement.close(waiting, false, outcomeOf(timedOut("waiting-outer", 100n, 30_000)));
      const row = await repo.byInnerHash("mainnet", "waiting");
      expect(row?.outcome).toBeNull();
      expect(row?.status).toBe("pending");
      expect(settled).toHaveLength(1);
    } finally {
      await d.close();
    }
  });
