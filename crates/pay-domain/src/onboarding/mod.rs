//! Partner onboarding (room for a later issue).
