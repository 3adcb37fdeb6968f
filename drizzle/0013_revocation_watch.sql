CREATE INDEX "api_keys_revoked" ON "api_keys" USING btree ("revoked_at") WHERE revoked_at is not null;--> statement-breakpoint
CREATE INDEX "projects_updated" ON "projects" USING btree ("updated_at");