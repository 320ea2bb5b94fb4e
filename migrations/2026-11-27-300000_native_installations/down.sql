DROP TABLE native_installations;
ALTER TABLE oauth_applications DROP COLUMN pending_jkt;
ALTER TABLE oauth_applications DROP COLUMN accepted_jkt;
