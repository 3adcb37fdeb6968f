/** The relay's tables (drizzle). Migrations in drizzle/ are generated from this file with `bun run db:generate`. */
import { pgTable, text, bigint, jsonb, timestamp, integer, primaryKey, uniqueIndex } from "drizzle-orm/pg-core";

/** One row per sponsored inner transaction and network: the intent (written before sending) and its outcome. */
export const submissions = pgTable("submissions", {
  id: text("id").primaryKey(),
  network: text("network").notNull(),
  innerHash: text("inner_hash").notNull(),
  hash: text("hash").notNull(),
  caller: text("caller").notNull(),
  maxFee: bigint("max_fee", { mode: "bigint" }).notNull(),
  outcomeStatus: integer("outcome_status"),
  outcome: jsonb("outcome"),
  feeCharged: bigint("fee_charged", { mode: "bigint" }),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
}, (t) => [uniqueIndex("submissions_network_inner_hash").on(t.network, t.innerHash)]);

/** Idempotency keys per caller scope, kept until expiresAt. */
export const idempotencyKeys = pgTable("idempotency_keys", {
  scope: text("scope").notNull(),
  key: text("key").notNull(),
  bodyHash: text("body_hash").notNull(),
  outcome: jsonb("outcome"),
  expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
}, (t) => [primaryKey({ columns: [t.scope, t.key] })]);
