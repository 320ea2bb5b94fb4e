//! Signing in and out: the password check with its limits, the session cookie, and the CSRF
//! token that belongs to the session.

use super::*;

impl TenancyService {
    /// Signs a user in: the same error for an unknown e-mail and a wrong password, and at most
    /// `limits.login` attempts per e-mail and address in its window; a success clears them.
    pub fn login(&self, email: &str, password: &Secret, client_addr: &str) -> Result<LoginOutcome> {
        let email = normalize_email(email);
        let now = self.k.now();
        // Every attempt counts before the password is checked, so parallel guesses cannot
        // pass the limit together; a success forgets the account's bucket, and its own hit in
        // the address's bucket (which so counts failures across accounts).
        let key = format!("login:{email}|{client_addr}");
        let addr_key = format!("login-addr|{client_addr}");
        self.k
            .throttle_at::<TenancyError>(&addr_key, &self.k.limits.login_per_address, now)?;
        self.k
            .throttle::<TenancyError>(&key, &self.k.limits.login)?;
        let user = self.store.user_by_email(&email)?;
        let ok = self.k.crypto.verify_password(
            password.expose(),
            user.as_ref().map(|u| u.password_hash.as_str()),
        );
        let (true, Some(user)) = (ok, user) else {
            return Err(InvalidLogin.into());
        };
        let company = self
            .store
            .memberships(user.id)?
            .into_iter()
            .next()
            .ok_or(InvalidLogin)?;
        self.k.clear_throttle(&key)?;
        self.k.forget_throttle_hit(&addr_key, now)?;
        self.start_session(user.id, company.company_id)
    }

    /// A new session of `user` acting on `company` (after a password check, or for the user
    /// who just signed up on a claim page): its token and CSRF token, returned once.
    pub(crate) fn start_session(&self, user: UserId, company: CompanyId) -> Result<LoginOutcome> {
        let now = self.k.now();
        let token = self.k.new_secret("pss_");
        let csrf = self.csrf_of(&token);
        let session = StoredSignIn {
            id: SignInId(self.k.crypto.new_uuid()),
            token_digest: self.k.crypto.digest(token.expose()),
            csrf_digest: self.k.crypto.digest(csrf.expose()),
            user_id: user,
            company_id: company,
            created_at: now,
            expires_at: now.plus(SIGN_IN_TTL),
        };
        self.store.insert_sign_in(&session)?;
        Ok(LoginOutcome {
            session_token: token,
            csrf_token: csrf,
            expires_at: session.expires_at,
        })
    }

    /// Resolves a session cookie; an unknown or expired session is `Unauthorized`.
    pub fn authenticate_sign_in(&self, token: &str) -> Result<SignedIn> {
        let session = self
            .store
            .sign_in_by_token(&self.k.crypto.digest(token))?
            .ok_or(Denied::Unauthenticated)?;
        if session.expires_at <= self.k.now() {
            return Err(Denied::Unauthenticated.into());
        }
        Ok(SignedIn { sign_in: session })
    }

    /// The session's CSRF token: derived from its secret token (a digest under its own label,
    /// which does not reveal the token), so every page that holds the session cookie can embed
    /// it in its forms and the JSON sign-in returns the same value; only its digest is stored
    /// with the session. No second cookie carries it.
    fn csrf_of(&self, session_token: &Secret) -> Secret {
        Secret::new(
            self.k
                .crypto
                .digest(&format!("pay-csrf|{}", session_token.expose()))
                .0,
        )
    }

    /// The CSRF token a page embeds in the forms of the session `session_token` (whose
    /// resolved sign-in is `signed_in`). A session whose stored token digest is of another
    /// token (not of this derivation) is `Unauthenticated`: it signs in again.
    pub fn page_csrf(&self, signed_in: &SignedIn, session_token: &str) -> Result<Secret> {
        let csrf = self.csrf_of(&Secret::new(session_token.to_owned()));
        self.check_csrf(signed_in, Some(csrf.expose()))
            .map_err(|_| Denied::Unauthenticated)?;
        Ok(csrf)
    }

    /// Checks the CSRF token of a session-authenticated mutation (403 when wrong or missing).
    pub fn check_csrf(&self, signed_in: &SignedIn, token: Option<&str>) -> Result<()> {
        match token {
            Some(t)
                if self
                    .k
                    .crypto
                    .digest_matches(t, &signed_in.sign_in.csrf_digest) =>
            {
                Ok(())
            }
            _ => Err(Denied::Forbidden.into()),
        }
    }

    /// The principal a session acts as on payment routes: its current company and role.
    pub fn sign_in_principal(&self, signed_in: &SignedIn) -> Result<Principal> {
        let s = &signed_in.sign_in;
        let role = self
            .store
            .role(s.user_id, s.company_id)?
            .ok_or(Denied::Forbidden)?;
        Ok(Principal {
            company_id: s.company_id,
            credential: Credential::SignIn {
                sign_in_id: s.id,
                user_id: s.user_id,
                role,
            },
        })
    }

    /// The principal a session acts as on a dashboard page of `company` (the team chosen in
    /// the page's path, whichever company the session started on): the user's role there. A
    /// company the user is not a member of is `Forbidden`.
    pub fn team_principal(&self, signed_in: &SignedIn, company: CompanyId) -> Result<Principal> {
        let role = self.team_role::<TenancyError>(signed_in, company, None)?;
        let s = &signed_in.sign_in;
        Ok(Principal {
            company_id: company,
            credential: Credential::SignIn {
                sign_in_id: s.id,
                user_id: s.user_id,
                role,
            },
        })
    }

    pub fn logout(&self, token: &str) -> PortResult<()> {
        self.store.delete_sign_in(&self.k.crypto.digest(token))
    }

    /// A security reset's part in tenancy (`pay-server admin security-reset`): every sign-in
    /// of every member of the company ends, those acting on another company too (a sign-in is
    /// its user's, and a user may switch companies in it). Returns how many ended.
    pub fn end_member_sign_ins(&self, company: CompanyId) -> PortResult<u64> {
        self.store.delete_member_sign_ins(company)
    }

    /// A security reset's API-key part: every enabled API key of the company is disabled
    /// (kept, so its owner sees it and decides: re-enable, or delete and create a new one).
    /// Returns how many were disabled.
    pub fn disable_api_keys(&self, company: CompanyId) -> PortResult<u64> {
        let mut n = 0;
        for key in self.store.integrations(company)? {
            if key.enabled
                && self
                    .store
                    .set_integration_enabled(company, key.partner_id, false)?
                    .is_some()
            {
                n += 1;
            }
        }
        Ok(n)
    }

    /// Whether the company exists.
    pub fn company_exists(&self, company: CompanyId) -> PortResult<bool> {
        Ok(self.store.company_with_settings(company)?.is_some())
    }
}
