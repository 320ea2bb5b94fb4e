DROP TABLE payment_links;
DROP TABLE login_failures;
DROP TABLE browser_sessions;
DROP TABLE integrations;
DROP TABLE pay_settings;
DROP TABLE memberships;
DROP TABLE companies;
DROP TABLE users;
