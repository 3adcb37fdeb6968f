CREATE TABLE "events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"project_id" text,
	"network" text NOT NULL,
	"submission_id" text,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "submission_attempts" (
	"submission_id" text NOT NULL,
	"hash" text NOT NULL,
	"fee_bid" bigint NOT NULL,
	"channel" text NOT NULL,
	"answer" text,
	"sent_at" timestamp with time zone DEFAULT now() NOT NULL,
	"answered_at" timestamp with time zone,
	CONSTRAINT "submission_attempts_submission_id_hash_pk" PRIMARY KEY("submission_id","hash")
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"webhook_id" text NOT NULL,
	"event_id" bigint NOT NULL,
	"type" text NOT NULL,
	"state" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"response_status" integer,
	"last_error" text,
	"next_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"url" text NOT NULL,
	"events" jsonb NOT NULL,
	"description" text,
	"secret" text NOT NULL,
	"cursor" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "submissions" ADD COLUMN "status" text DEFAULT 'pending' NOT NULL;--> statement-breakpoint
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "events_project" ON "events" USING btree ("project_id","id");--> statement-breakpoint
CREATE INDEX "events_created" ON "events" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_one" ON "webhook_deliveries" USING btree ("webhook_id","event_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due" ON "webhook_deliveries" USING btree ("next_at") WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_webhook" ON "webhook_deliveries" USING btree ("webhook_id","id");--> statement-breakpoint
CREATE INDEX "webhooks_project" ON "webhooks" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "submissions_hash" ON "submissions" USING btree ("hash");--> statement-breakpoint
CREATE INDEX "submissions_created" ON "submissions" USING btree ("created_at","id");--> statement-breakpoint
UPDATE "submissions" SET "status" = CASE
  WHEN "outcome_kind" = 'success' THEN 'success'
  WHEN "outcome_kind" = 'failure' AND "fee_charged" IS NOT NULL THEN 'failed'
  WHEN "outcome_kind" = 'failure' THEN 'rejected'
  WHEN "released_at" IS NOT NULL THEN 'expired'
  ELSE 'submitted' END;
--> statement-breakpoint
CREATE FUNCTION "submission_json"(s "submissions") RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_strip_nulls(jsonb_build_object(
    'hash', coalesce(s."outcome"->'result'->>'hash', s."outcome"->'error'->'details'->>'hash', s."hash"),
    'innerHash', s."inner_hash",
    'status', s."status",
    'network', s."network",
    'ledger', coalesce(s."outcome"->'result'->'ledger', s."outcome"->'error'->'details'->'ledger'),
    'feeCharged', s."fee_charged"::text,
    'resultXdr', coalesce(s."outcome"->'result'->'resultXdr', s."outcome"->'error'->'details'->'resultXdr'),
    'error', CASE WHEN s."outcome_kind" = 'failure' THEN s."outcome"->'error' END,
    'createdAt', to_char(s."created_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updatedAt', to_char(s."updated_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
$$;
