DROP INDEX wallet_activities_session;
