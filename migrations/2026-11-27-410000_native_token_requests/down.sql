DROP TABLE oauth_token_requests;
