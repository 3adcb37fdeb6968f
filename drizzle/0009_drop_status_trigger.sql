-- Migration 0007 first wrote the status events with a trigger; the statements that change a status
-- now write them (src/store/submissions.repo.ts). A database migrated while 0007 had the trigger
-- would write every event twice: this drops what it may have left.
DROP TRIGGER IF EXISTS "submissions_status_updated" ON "submissions";--> statement-breakpoint
DROP TRIGGER IF EXISTS "submissions_status_inserted" ON "submissions";--> statement-breakpoint
DROP FUNCTION IF EXISTS "submissions_status_events"();
