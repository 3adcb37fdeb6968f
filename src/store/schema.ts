/** The relay's tables (drizzle). Migrations in drizzle/ are generated from this file with `bun run db:generate`. */
import { sql } from "drizzle-orm";
import {
  pgTable,
  text,
  bigint,
  bigserial,
  jsonb,
  timestamp,
  integer,
  boolean,
  primaryKey,
  uniqueIndex,
  index,
} from "drizzle-orm/pg-core";
import type { HeldTx } from "./types.ts";

/** One row per sponsored inner transaction and network: the intent (written before sending) and its outcome. */
export const submissions = pgTable(
  "submissions",
  {
    id: text("id").primaryKey(),
    network: text("network").notNull(),
    innerHash: text("inner_hash").notNull(),
    hash: text("hash").notNull(),
    caller: text("caller").notNull(),
    /** The paying project; null for the anonymous testnet relay. */
    projectId: text("project_id"),
    /**
     * Its end user: the inner transaction's source, or a func+auth call's signer when a policy asked who
     * it is (perUser, approval); null otherwise. An end user's usage is counted from these rows.
     */
    endUser: text("end_user"),
    /**
     * The count and fee hold its admission took against its end user's day (perUser caps), while no
     * outcome is known: `{day, grant}`; taken (null) by whoever records its outcome, once.
     */
    userHold: jsonb("user_hold").$type<{ day: string; grant: string }>(),
    maxFee: bigint("max_fee", { mode: "bigint" }).notNull(),
    /** The last envelope sent (base64): a resumed submission sends it again rather than wrap anew. */
    envelope: text("envelope"),
    /** The network's latest ledger when that envelope was sent. */
    sentLedger: integer("sent_ledger"),
    /**
     * A transaction held for its predecessor (order flow), not sent yet: the client's transaction as it
     * came (base64), its source account and sequence number. Cleared with its outcome (or when its run
     * answers 504); after a crash, the relay (or another instance) sends the held ones in order.
     */
    held: jsonb("held").$type<HeldTx>(),
    /** Set by recovery when no wrapping can be in a queue any more and the reservation was given back. */
    releasedAt: timestamp("released_at", { withTimezone: true }),
    /**
     * The lifecycle status (actors/sponsor/submission.machine.ts): pending, submitted, success, failed,
     * rejected or expired. Every change goes through the machine and writes an event (`events`).
     */
    status: text("status").notNull().default("pending"),
    /** success or failure once the outcome is recorded; null while the submission is unsettled. */
    outcomeKind: text("outcome_kind"),
    outcome: jsonb("outcome"),
    feeCharged: bigint("fee_charged", { mode: "bigint" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("submissions_network_inner_hash").on(t.network, t.innerHash),
    index("submissions_hash").on(t.hash),
    index("submissions_created").on(t.createdAt, t.id),
    index("submissions_project_updated").on(t.projectId, t.updatedAt),
    index("submissions_unsettled").on(t.network, t.updatedAt).where(sql`outcome_kind is null and released_at is null`),
    index("submissions_held").on(t.network).where(sql`held is not null and outcome_kind is null`),
  ],
);

/** Idempotency keys per caller scope, kept until expiresAt. */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    bodyHash: text("body_hash").notNull(),
    outcome: jsonb("outcome"),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.key] })],
);

/**
 * Projects: a name, a status and the policy fields that differ from the defaults. `creditBalance`
 * (the sum of the project's journal) and `creditReserved` (its outstanding reservations) are kept
 * by a trigger on the journal's inserts (migration 0006), in the inserting transaction.
 * `updatedAt` moves with every change an operator makes (name, status, policy): each instance reads
 * the projects changed since its last look (projects_updated, migration 0010), in case it missed a notice.
 */
export const projects = pgTable(
  "projects",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    status: text("status", { enum: ["active", "suspended"] })
      .notNull()
      .default("active"),
    policy: jsonb("policy").notNull().default({}),
    creditBalance: bigint("credit_balance", { mode: "bigint" }).notNull().default(sql`0`),
    creditReserved: bigint("credit_reserved", { mode: "bigint" }).notNull().default(sql`0`),
    /**
     * Whether a `credits.low` event was written since the balance last fell below the policy's
     * lowBalanceAlert (migration 0008: the journal's trigger sets it with the event; a top-up that
     * lifts the balance back to or above the alert, or a change of the alert, clears it).
     */
    lowBalanceAlerted: boolean("low_balance_alerted").notNull().default(false),
    /** The addresses the project accepts x402 payments to (`x402.payTo`): only those it may settle. */
    x402PayTo: jsonb("x402_pay_to").$type<string[]>().notNull().default([]),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("projects_updated").on(t.updatedAt)],
);

/** API keys: only the SHA-256 of the key is kept, with a displayable prefix. */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id),
    environment: text("environment", { enum: ["test", "live"] }).notNull(),
    hash: text("hash").notNull().unique(),
    prefix: text("prefix").notNull(),
    label: text("label"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    /** What the key may call (sponsor, simulate, estimate, read); keys made before scopes existed may call all. */
    scopes: text("scopes").array().notNull().default(sql`'{sponsor,simulate,estimate,read}'::text[]`),
    /** When the key stops working (null: never); a rotation sets the old key's to the end of the overlap. */
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    /** The last authenticated use, written at most once a minute per key and instance. */
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
  },
  // the revoked keys by time: each instance reads those revoked since its last look (migration 0010)
  (t) => [
    index("api_keys_project").on(t.projectId),
    index("api_keys_revoked").on(t.revokedAt).where(sql`revoked_at is not null`),
  ],
);

/**
 * The credit journal, append-only: a project's balance is the sum of its amounts. Kinds: topup,
 * adjustment, reserve (the maximum fee, before sending), release (the reservation given back when
 * the result is known) and charge (the fee the network charged, with the transaction hash).
 */
export const creditJournal = pgTable(
  "credit_journal",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id),
    kind: text("kind", { enum: ["topup", "adjustment", "reserve", "release", "charge"] }).notNull(),
    amount: bigint("amount", { mode: "bigint" }).notNull(),
    submissionId: text("submission_id"),
    txHash: text("tx_hash"),
    reference: text("reference"),
    reason: text("reason"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("credit_journal_project").on(t.projectId, t.id),
    index("credit_journal_submission").on(t.submissionId),
    // a submission is charged once, whatever races (the row lock is the rule; this is the backstop)
    uniqueIndex("credit_journal_one_charge").on(t.submissionId).where(sql`kind = 'charge'`),
  ],
);

/**
 * Channel accounts per network. The secret key is sealed with AES-256-GCM (`secret` holds the
 * nonce, the ciphertext and the tag, base64; the network and public key are its associated data).
 * Merged channels stay, for the record.
 */
export const channels = pgTable(
  "channels",
  {
    network: text("network").notNull(),
    publicKey: text("public_key").notNull(),
    secret: text("secret").notNull(),
    state: text("state", { enum: ["creating", "active", "draining", "merged"] }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.network, t.publicKey] })],
);

/** The channel count an operator asked for, per network (kept across restarts). */
export const channelTargets = pgTable("channel_targets", {
  network: text("network").primaryKey(),
  target: integer("target").notNull(),
  /** The most channels demand may grow the pool to, set at runtime (null: the configured maximum). */
  maxChannels: integer("max_channels"),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Each fee-bump a submission sent (or was about to send: the row is written before it is sent): its
 * hash, its fee bid (stroops per operation), the channel account paying it, and what the network
 * answered (PENDING, DUPLICATE, an error code; null until it answers).
 */
export const submissionAttempts = pgTable(
  "submission_attempts",
  {
    submissionId: text("submission_id").notNull(),
    hash: text("hash").notNull(),
    feeBid: bigint("fee_bid", { mode: "bigint" }).notNull(),
    channel: text("channel").notNull(),
    answer: text("answer"),
    sentAt: timestamp("sent_at", { withTimezone: true }).notNull().defaultNow(),
    answeredAt: timestamp("answered_at", { withTimezone: true }),
  },
  // by hash too: a look-up by a fee-bump hash an earlier attempt was answered with finds its submission
  (t) => [primaryKey({ columns: [t.submissionId, t.hash] }), index("submission_attempts_hash").on(t.hash)],
);

/**
 * What happened, in order: a submission's status change (`transaction.status`, written in the
 * statement that changes the status) or a project's balance falling below its alert
 * (`credits.low`). `data` is the event's payload as streamed and delivered. Kept for at least 24 h:
 * the stream's resumption (Last-Event-ID) and the webhooks' outbox.
 */
export const events = pgTable(
  "events",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    type: text("type").notNull(),
    projectId: text("project_id"),
    network: text("network").notNull(),
    submissionId: text("submission_id"),
    data: jsonb("data").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("events_project").on(t.projectId, t.id), index("events_created").on(t.createdAt)],
);

/**
 * A project's webhook endpoints. `secret` is the Standard Webhooks signing secret, sealed like the
 * channel keys when the relay has a key to seal with. `cursor`: the last event fanned out into
 * deliveries for it.
 */
export const webhooks = pgTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id),
    url: text("url").notNull(),
    events: jsonb("events").notNull(),
    description: text("description"),
    secret: text("secret").notNull(),
    cursor: bigint("cursor", { mode: "bigint" }).notNull().default(sql`0`),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    deletedAt: timestamp("deleted_at", { withTimezone: true }),
  },
  (t) => [index("webhooks_project").on(t.projectId)],
);

/** One event to one webhook: delivered at least once, retried with backoff until it is or gives up. */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: bigserial("id", { mode: "bigint" }).primaryKey(),
    webhookId: text("webhook_id").notNull(),
    eventId: bigint("event_id", { mode: "bigint" }).notNull(),
    type: text("type").notNull(),
    state: text("state", { enum: ["pending", "delivered", "failed"] }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    responseStatus: integer("response_status"),
    lastError: text("last_error"),
    /** Each attempt, oldest first: `{at, status, error, durationMs}` (WebhooksRepo.attempted; migration 0010). */
    attemptLog: jsonb("attempt_log").notNull().default(sql`'[]'::jsonb`),
    nextAt: timestamp("next_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_one").on(t.webhookId, t.eventId),
    index("webhook_deliveries_due").on(t.nextAt).where(sql`state = 'pending'`),
    index("webhook_deliveries_webhook").on(t.webhookId, t.id),
    // the due rows of a webhook, for the worker's claim (migration 0008)
    index("webhook_deliveries_webhook_due").on(t.webhookId, t.nextAt).where(sql`state = 'pending'`),
  ],
);

/**
 * What each end user of a project (the inner transaction's source, or a func+auth call's first signer)
 * was sponsored per UTC day, for the policy's perUser caps: transactions counted and fees held at
 * admission (one statement checks and adds, so that instances sharing the database never overshoot),
 * then settled with what the network charged.
 */
export const userDays = pgTable(
  "user_days",
  {
    projectId: text("project_id").notNull(),
    account: text("account").notNull(),
    /** The UTC day, YYYY-MM-DD. */
    day: text("day").notNull(),
    transactions: integer("transactions").notNull().default(0),
    feeCharged: bigint("fee_charged", { mode: "bigint" }).notNull().default(sql`0`),
    feeHeld: bigint("fee_held", { mode: "bigint" }).notNull().default(sql`0`),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.account, t.day] })],
);
