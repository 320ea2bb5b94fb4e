ALTER TABLE companies DROP COLUMN website;
