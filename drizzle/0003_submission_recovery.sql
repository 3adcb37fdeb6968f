ALTER TABLE "submissions" ADD COLUMN "envelope" text;--> statement-breakpoint
ALTER TABLE "submissions" ADD COLUMN "sent_ledger" integer;--> statement-breakpoint
ALTER TABLE "submissions" ADD COLUMN "released_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "submissions_unsettled" ON "submissions" USING btree ("network","updated_at") WHERE outcome_status is null and released_at is null;