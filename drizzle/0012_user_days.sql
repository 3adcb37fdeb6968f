CREATE TABLE "user_days" (
	"project_id" text NOT NULL,
	"account" text NOT NULL,
	"day" text NOT NULL,
	"transactions" integer DEFAULT 0 NOT NULL,
	"fee_charged" bigint DEFAULT 0 NOT NULL,
	"fee_held" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "user_days_project_id_account_day_pk" PRIMARY KEY("project_id","account","day")
);
