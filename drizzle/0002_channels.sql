CREATE TABLE "channel_targets" (
	"network" text PRIMARY KEY NOT NULL,
	"target" integer NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "channels" (
	"network" text NOT NULL,
	"public_key" text NOT NULL,
	"secret" text NOT NULL,
	"state" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "channels_network_public_key_pk" PRIMARY KEY("network","public_key")
);
