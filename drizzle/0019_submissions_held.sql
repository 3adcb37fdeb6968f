ALTER TABLE "submissions" ADD COLUMN "held" jsonb;--> statement-breakpoint
CREATE INDEX "submissions_held" ON "submissions" USING btree ("network") WHERE held is not null and outcome_kind is null;