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
  primaryKey,
  uniqueIndex,
  index,
} from "drizzle-orm/pg-core";

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
    maxFee: bigint("max_fee", { mode: "bigint" }).notNull(),
    /** The last envelope sent (base64): a resumed submission sends it again rather than wrap anew. */
    envelope: text("envelope"),
    /** The network's latest ledger when that envelope was sent. */
    sentLedger: integer("sent_ledger"),
    /** Set by recovery when no wrapping can be in a queue any more and the reservation was given back. */
    releasedAt: timestamp("released_at", { withTimezone: true }),
    /** success or failure once the outcome is recorded; null while the submission is unsettled. */
    outcomeKind: text("outcome_kind"),
    outcome: jsonb("outcome"),
    feeCharged: bigint("fee_charged", { mode: "bigint" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("submissions_network_inner_hash").on(t.network, t.innerHash),
    index("submissions_project_updated").on(t.projectId, t.updatedAt),
    index("submissions_unsettled").on(t.network, t.updatedAt).where(sql`outcome_kind is null and released_at is null`),
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
 */
export const projects = pgTable("projects", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  status: text("status", { enum: ["active", "suspended"] })
    .notNull()
    .default("active"),
  policy: jsonb("policy").notNull().default({}),
  creditBalance: bigint("credit_balance", { mode: "bigint" }).notNull().default(sql`0`),
  creditReserved: bigint("credit_reserved", { mode: "bigint" }).notNull().default(sql`0`),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

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
  },
  (t) => [index("api_keys_project").on(t.projectId)],
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
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});
