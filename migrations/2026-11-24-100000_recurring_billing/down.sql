DROP TABLE subscription_cycles;
DROP TABLE subscriptions;
DROP TABLE contacts;
