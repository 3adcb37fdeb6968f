CREATE TABLE "idempotency_keys" (
	"scope" text NOT NULL,
	"key" text NOT NULL,
	"body_hash" text NOT NULL,
	"outcome" jsonb,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "idempotency_keys_scope_key_pk" PRIMARY KEY("scope","key")
);
--> statement-breakpoint
CREATE TABLE "submissions" (
	"id" text PRIMARY KEY NOT NULL,
	"network" text NOT NULL,
	"inner_hash" text NOT NULL,
	"hash" text NOT NULL,
	"caller" text NOT NULL,
	"max_fee" bigint NOT NULL,
	"outcome_status" integer,
	"outcome" jsonb,
	"fee_charged" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "submissions_network_inner_hash" ON "submissions" USING btree ("network","inner_hash");