-- Native installations: a native application's registered DPoP key (its JWK thumbprint) and
-- the replacement waiting for consent, on the application; and the installations, each with
-- the application made for it at its first registration.
ALTER TABLE oauth_applications ADD COLUMN accepted_jkt TEXT NULL;
ALTER TABLE oauth_applications ADD COLUMN pending_jkt TEXT NULL;

-- `registration_id` is the plugin's own id (43 base64url characters); platform and site never
-- change; the versions and site name are support metadata, updated by each registration.
CREATE TABLE native_installations (
    registration_id TEXT PRIMARY KEY NOT NULL,
    platform TEXT NOT NULL REFERENCES native_platforms(platform),
    application_id TEXT NOT NULL UNIQUE REFERENCES oauth_applications(id),
    site_url TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    platform_version TEXT NULL,
    plugin_version TEXT NULL,
    site_name TEXT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
