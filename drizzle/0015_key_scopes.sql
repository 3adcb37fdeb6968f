ALTER TABLE "api_keys" ADD COLUMN "scopes" text[] DEFAULT '{sponsor,simulate,estimate,read}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "last_used_at" timestamp with time zone;