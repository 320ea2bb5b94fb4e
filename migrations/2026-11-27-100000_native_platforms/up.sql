-- Native commerce-platform templates (`pay-server admin create-native-platform`): the
-- immutable branding every installation of the platform shows (name, icon, support link) and
-- its scopes (the official native set, space-separated). Written once, never updated.
CREATE TABLE native_platforms (
    platform TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    icon_url TEXT NULL,
    support_url TEXT NULL,
    scopes TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
