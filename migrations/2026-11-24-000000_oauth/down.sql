DROP TABLE dpop_jtis;
DROP TABLE oauth_access_tokens;
DROP TABLE oauth_refresh_tokens;
DROP TABLE oauth_codes;
DROP TABLE oauth_families;
DROP TABLE oauth_grants;
DROP TABLE oauth_applications;
