DROP TABLE oauth_generation;
