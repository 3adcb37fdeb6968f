ALTER TABLE "projects" ADD COLUMN "credit_balance" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "credit_reserved" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE FUNCTION "credit_journal_totals"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "projects" p SET
    "credit_balance" = p."credit_balance" + n.amount,
    "credit_reserved" = p."credit_reserved" - n.held
  FROM (
    SELECT "project_id", sum("amount") AS amount,
      coalesce(sum("amount") FILTER (WHERE "kind" IN ('reserve', 'release')), 0) AS held
    FROM inserted GROUP BY "project_id"
  ) n
  WHERE p."id" = n."project_id";
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "credit_journal_totals" AFTER INSERT ON "credit_journal"
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION "credit_journal_totals"();--> statement-breakpoint
UPDATE "projects" p SET
  "credit_balance" = coalesce((SELECT sum(c."amount") FROM "credit_journal" c WHERE c."project_id" = p."id"), 0),
  "credit_reserved" = -coalesce((SELECT sum(c."amount") FROM "credit_journal" c
    WHERE c."project_id" = p."id" AND c."kind" IN ('reserve', 'release')), 0);
