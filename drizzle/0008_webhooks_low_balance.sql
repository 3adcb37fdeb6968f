ALTER TABLE "projects" ADD COLUMN "low_balance_alerted" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_webhook_due" ON "webhook_deliveries" USING btree ("webhook_id","next_at") WHERE state = 'pending';--> statement-breakpoint
CREATE OR REPLACE FUNCTION "credit_journal_totals"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  -- the totals as in 0006; RETURNING reads the flag as it was (this update does not change it) and
  -- the alert, on the row as locked, so that the transitions below are exact under concurrent inserts
  FOR r IN
    UPDATE "projects" p SET
      "credit_balance" = p."credit_balance" + n.amount,
      "credit_reserved" = p."credit_reserved" - n.held
    FROM (
      SELECT "project_id", sum("amount") AS amount,
        coalesce(sum("amount") FILTER (WHERE "kind" IN ('reserve', 'release')), 0) AS held,
        coalesce(bool_or("kind" IN ('topup', 'adjustment') AND "amount" > 0), false) AS credited
      FROM inserted GROUP BY "project_id"
    ) n
    WHERE p."id" = n."project_id"
    RETURNING p."id", p."credit_balance" AS balance, p."low_balance_alerted" AS alerted,
      p."policy"->>'lowBalanceAlert' AS alert, n.credited
  LOOP
    -- a project without an alert, or whose flag stays as it is, costs this test only
    IF r.alert IS NOT NULL AND NOT r.alerted AND r.balance < r.alert::numeric THEN
      UPDATE "projects" SET "low_balance_alerted" = true WHERE "id" = r.id;
      INSERT INTO "events" ("type", "project_id", "network", "data")
      VALUES ('credits.low', r.id, 'mainnet',
        jsonb_build_object('projectId', r.id, 'balance', r.balance::text, 'lowBalanceAlert', r.alert));
    ELSIF r.alerted AND r.credited AND (r.alert IS NULL OR r.balance >= r.alert::numeric) THEN
      UPDATE "projects" SET "low_balance_alerted" = false WHERE "id" = r.id;
    END IF;
  END LOOP;
  RETURN NULL;
END $$;
