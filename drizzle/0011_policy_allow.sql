-- A project's allowedContractIds is superseded by allow.contracts (a list of {contract, functions?}):
-- each stored list becomes allow.contracts without functions (src/relay/sponsorship-rules.ts still
-- reads the old field, for a database that skipped this).
UPDATE "projects"
SET "policy" = ("policy" - 'allowedContractIds') || jsonb_build_object(
  'allow',
  coalesce("policy"->'allow', '{}'::jsonb) || jsonb_build_object(
    'contracts',
    coalesce(
      (SELECT jsonb_agg(jsonb_build_object('contract', c)) FROM jsonb_array_elements_text("policy"->'allowedContractIds') AS c),
      '[]'::jsonb
    )
  )
)
WHERE "policy" ? 'allowedContractIds' AND NOT coalesce("policy"->'allow' ? 'contracts', false);
