DROP INDEX "submissions_unsettled";--> statement-breakpoint
ALTER TABLE "submissions" ADD COLUMN "outcome_kind" text;--> statement-breakpoint
UPDATE "submissions" SET "outcome_kind" = CASE WHEN "outcome_status" = 200 THEN 'success' ELSE 'failure' END WHERE "outcome_status" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "submissions_unsettled" ON "submissions" USING btree ("network","updated_at") WHERE outcome_kind is null and released_at is null;--> statement-breakpoint
ALTER TABLE "submissions" DROP COLUMN "outcome_status";
