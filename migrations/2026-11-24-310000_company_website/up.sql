-- The company's website (GET /api/partner/v1/pay/company shows it; `admin bootstrap
-- --website` sets it, and partner onboarding will). An absolute http(s) URL, or NULL.
ALTER TABLE companies ADD COLUMN website TEXT NULL;
