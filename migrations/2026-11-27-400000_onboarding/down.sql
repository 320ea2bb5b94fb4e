DROP TABLE onboarding_drafts;
DROP TABLE onboarding_partners;
