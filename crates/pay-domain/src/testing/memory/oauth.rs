//! The in-memory store: OAuth applications, grants, families, codes, tokens and DPoP `jti`s.

use super::{unique_violation, MemStore, Tables};
use crate::kernel::error::{Fault, PortResult};
use crate::kernel::ids::*;
use crate::kernel::secret::SecretDigest;
use crate::kernel::timestamp::Timestamp;
use crate::oauth::ports::{CompanyGrant, DpopReplayStore, JtiRecord, OAuthStore};
use crate::oauth::recovery::TokenAnswer;
use crate::oauth::{
    ConnectedApp, Family, Grant, Held, InstalledSite, KeySwap, RegisteredKey, StoredApplication,
    StoredCode, StoredToken,
};

/// OAuth's tables.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OAuthTables {
    pub applications: Vec<StoredApplication>,
    pub grants: Vec<Grant>,
    pub families: Vec<Family>,
    pub codes: Vec<StoredCode>,
    pub access_tokens: Vec<StoredToken>,
    pub refresh_tokens: Vec<StoredToken>,
    /// `(htu, jti_digest, keep_until)`.
    pub jtis: Vec<(String, String, Timestamp)>,
    /// Keyed token requests (`recovery.rs`).
    pub token_requests: Vec<super::oauth_recovery::TokenRequestRecord>,
}

impl OAuthTables {
    fn held<T: Clone>(&self, item: &T, family: FamilyId) -> PortResult<Held<T>> {
        let family = self
            .families
            .iter()
            .find(|f| f.id == family)
            .ok_or_else(|| Fault::new("foreign key: family"))?;
        let grant = self
            .grants
            .iter()
            .find(|g| g.id == family.grant_id)
            .ok_or_else(|| Fault::new("foreign key: grant"))?;
        Ok(Held {
            item: item.clone(),
            grant: grant.clone(),
            family: family.clone(),
        })
    }

    /// Answers the in-flight claim `a` names, or fails with nothing written.
    fn answer_claim(&mut self, a: Option<&TokenAnswer>) -> PortResult<()> {
        let Some(a) = a else { return Ok(()) };
        let record = self
            .token_requests
            .iter_mut()
            .find(|r| {
                r.key.application_id == a.key.application_id
                    && r.key.key_digest == a.key.key_digest
                    && r.token == a.token
                    && r.answer.is_none()
            })
            .ok_or_else(|| Fault::new("the token request's claim was taken over"))?;
        record.answer = Some(a.clone());
        Ok(())
    }

    /// Erases the answers `which` picks (the records stay).
    fn erase_answers(&mut self, which: impl Fn(&TokenAnswer) -> bool) {
        for r in &mut self.token_requests {
            if r.answer.as_ref().is_some_and(&which) {
                r.erased = true;
            }
        }
    }

    fn check_token(&self, t: &StoredToken) -> PortResult<()> {
        let family = self.families.iter().find(|f| f.id == t.family_id);
        if family.is_none_or(|f| f.grant_id != t.grant_id) {
            return Err(Fault::new("foreign key: family"));
        }
        if !self
            .applications
            .iter()
            .any(|a| a.app.id == t.application_id)
        {
            return Err(Fault::new("foreign key: application"));
        }
        Ok(())
    }
}

impl OAuthStore for MemStore {
    fn insert_application(&self, app: &StoredApplication) -> PortResult<()> {
        self.count_call("insert_application");
        let mut t = self.write();
        let o = &mut t.oauth;
        if o.applications
            .iter()
            .any(|a| a.app.id == app.app.id || a.app.client_id == app.app.client_id)
        {
            return Err(unique_violation("oauth_applications.client_id"));
        }
        o.applications.push(app.clone());
        Ok(())
    }

    fn application(&self, client_id: &ClientId) -> PortResult<Option<StoredApplication>> {
        self.count_call("application");
        Ok(self
            .tables()
            .oauth
            .applications
            .iter()
            .find(|a| &a.app.client_id == client_id)
            .cloned())
    }

    fn save_authorization(
        &self,
        grant: &Grant,
        family: &Family,
        code: &StoredCode,
    ) -> PortResult<Grant> {
        self.count_call("save_authorization");
        save_authorization_in(&mut self.write(), grant, family, code)
    }

    fn save_authorization_with_key(
        &self,
        grant: &Grant,
        family: &Family,
        code: &StoredCode,
        swap: &KeySwap,
    ) -> PortResult<Option<Grant>> {
        self.count_call("save_authorization_with_key");
        let mut t = self.write();
        let swappable = |a: &StoredApplication| {
            a.app.id == grant.application_id
                && a.app.key.as_ref().is_some_and(|k| {
                    k.accepted_jkt == swap.from_jkt && k.pending_jkt.as_ref() == Some(&swap.to_jkt)
                })
        };
        if !t.oauth.applications.iter().any(swappable) {
            return Ok(None);
        }
        // The old key's families end first, then the authorization (which fails before any
        // write of its own), then the key moves: one critical section.
        let grants: Vec<GrantId> = t
            .oauth
            .grants
            .iter()
            .filter(|g| g.application_id == grant.application_id)
            .map(|g| g.id)
            .collect();
        let live: Vec<usize> = (0..t.oauth.families.len())
            .filter(|&i| {
                let f = &t.oauth.families[i];
                grants.contains(&f.grant_id) && f.revoked_at.is_none()
            })
            .collect();
        let in_force = save_authorization_in(&mut t, grant, family, code)?;
        for i in live {
            t.oauth.families[i].revoked_at = Some(grant.updated_at);
        }
        t.oauth
            .erase_answers(|a| a.key.application_id == grant.application_id);
        if let Some(a) = t.oauth.applications.iter_mut().find(|a| swappable(a)) {
            a.app.key = Some(RegisteredKey {
                accepted_jkt: swap.to_jkt.clone(),
                pending_jkt: None,
            });
        }
        Ok(Some(in_force))
    }

    fn set_pending_key(
        &self,
        application: ApplicationId,
        accepted_jkt: &str,
        pending_jkt: Option<&str>,
    ) -> PortResult<bool> {
        self.count_call("set_pending_key");
        let mut t = self.write();
        match t
            .oauth
            .applications
            .iter_mut()
            .find(|a| a.app.id == application)
            .and_then(|a| a.app.key.as_mut())
            .filter(|k| k.accepted_jkt == accepted_jkt)
        {
            Some(k) => {
                k.pending_jkt = pending_jkt.map(str::to_owned);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn grant(&self, company: CompanyId, application: ApplicationId) -> PortResult<Option<Grant>> {
        self.count_call("grant");
        Ok(self
            .tables()
            .oauth
            .grants
            .iter()
            .find(|g| g.company_id == company && g.application_id == application)
            .cloned())
    }

    fn company_grants(&self, company: CompanyId) -> PortResult<Vec<ConnectedApp>> {
        self.count_call("company_grants");
        let t = self.tables();
        let o = &t.oauth;
        let mut out = Vec::new();
        for g in o.grants.iter().filter(|g| g.company_id == company) {
            let app = o
                .applications
                .iter()
                .find(|a| a.app.id == g.application_id)
                .ok_or_else(|| Fault::new("foreign key: application"))?;
            let site = t
                .native_installations
                .iter()
                .find(|i| i.application_id == g.application_id)
                .map(|i| InstalledSite {
                    platform: i.platform.clone(),
                    site_url: i.site_url.clone(),
                    site_name: i.site_name.clone(),
                });
            out.push(ConnectedApp {
                grant: g.clone(),
                name: app.app.name.clone(),
                client_id: app.app.client_id.clone(),
                last_used_at: o
                    .refresh_tokens
                    .iter()
                    .filter(|r| r.grant_id == g.id)
                    .map(|r| r.created_at)
                    .max(),
                site,
            });
        }
        out.sort_by_key(|a| std::cmp::Reverse((a.grant.created_at, a.grant.id)));
        Ok(out)
    }

    fn code(&self, digest: &SecretDigest) -> PortResult<Option<Held<StoredCode>>> {
        self.count_call("code");
        let t = self.tables();
        let o = &t.oauth;
        match o.codes.iter().find(|c| &c.digest == digest) {
            Some(c) => o.held(c, c.family_id).map(Some),
            None => Ok(None),
        }
    }

    fn claim_code(&self, digest: &SecretDigest, at: Timestamp) -> PortResult<bool> {
        self.count_call("claim_code");
        let mut t = self.write();
        match t
            .oauth
            .codes
            .iter_mut()
            .find(|c| &c.digest == digest && c.used_at.is_none())
        {
            Some(c) => {
                c.used_at = Some(at);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn insert_tokens(
        &self,
        access: &StoredToken,
        refresh: &StoredToken,
        answer: Option<&TokenAnswer>,
    ) -> PortResult<()> {
        self.count_call("insert_tokens");
        let mut t = self.write();
        let o = &mut t.oauth;
        o.check_token(access)?;
        o.check_token(refresh)?;
        if o.access_tokens.iter().any(|x| x.digest == access.digest) {
            return Err(unique_violation("oauth_access_tokens.digest"));
        }
        if o.refresh_tokens.iter().any(|x| x.digest == refresh.digest) {
            return Err(unique_violation("oauth_refresh_tokens.digest"));
        }
        o.answer_claim(answer)?;
        o.access_tokens.push(access.clone());
        o.refresh_tokens.push(refresh.clone());
        Ok(())
    }

    fn refresh_token(&self, digest: &SecretDigest) -> PortResult<Option<Held<StoredToken>>> {
        self.count_call("refresh_token");
        let t = self.tables();
        let o = &t.oauth;
        match o.refresh_tokens.iter().find(|x| &x.digest == digest) {
            Some(x) => o.held(x, x.family_id).map(Some),
            None => Ok(None),
        }
    }

    fn rotate_refresh(
        &self,
        old: &SecretDigest,
        access: &StoredToken,
        refresh: &StoredToken,
        at: Timestamp,
        answer: Option<&TokenAnswer>,
    ) -> PortResult<bool> {
        self.count_call("rotate_refresh");
        let mut t = self.write();
        let o = &mut t.oauth;
        // All checks first: nothing is written unless everything is.
        o.check_token(access)?;
        o.check_token(refresh)?;
        if o.access_tokens.iter().any(|x| x.digest == access.digest) {
            return Err(unique_violation("oauth_access_tokens.digest"));
        }
        if o.refresh_tokens.iter().any(|x| x.digest == refresh.digest) {
            return Err(unique_violation("oauth_refresh_tokens.digest"));
        }
        let Some(spent) = o
            .refresh_tokens
            .iter()
            .position(|x| &x.digest == old && x.spent_at.is_none() && x.revoked_at.is_none())
        else {
            return Ok(false);
        };
        o.answer_claim(answer)?;
        o.erase_answers(|a| &a.refresh_digest == old);
        o.refresh_tokens.push(refresh.clone());
        o.access_tokens.push(access.clone());
        o.refresh_tokens[spent].spent_at = Some(at);
        Ok(true)
    }

    fn access_token(&self, digest: &SecretDigest) -> PortResult<Option<Held<StoredToken>>> {
        self.count_call("access_token");
        let t = self.tables();
        let o = &t.oauth;
        match o.access_tokens.iter().find(|x| &x.digest == digest) {
            Some(x) => o.held(x, x.family_id).map(Some),
            None => Ok(None),
        }
    }

    fn revoke_family(&self, family: FamilyId, at: Timestamp) -> PortResult<bool> {
        self.count_call("revoke_family");
        let mut t = self.write();
        match t
            .oauth
            .families
            .iter_mut()
            .find(|f| f.id == family && f.revoked_at.is_none())
        {
            Some(f) => {
                f.revoked_at = Some(at);
                t.oauth.erase_answers(|a| a.family_id == family);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn revoke_grant(&self, grant: GrantId, at: Timestamp) -> PortResult<bool> {
        self.count_call("revoke_grant");
        let mut t = self.write();
        match t
            .oauth
            .grants
            .iter_mut()
            .find(|g| g.id == grant && g.revoked_at.is_none())
        {
            Some(g) => {
                g.revoked_at = Some(at);
                for f in t.oauth.families.iter_mut().filter(|f| f.grant_id == grant) {
                    f.revoked_at.get_or_insert(at);
                }
                t.oauth.erase_answers(|a| a.grant_id == grant);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn revoke_company_grants(
        &self,
        company: CompanyId,
        at: Timestamp,
    ) -> PortResult<Vec<CompanyGrant>> {
        self.count_call("revoke_company_grants");
        let mut t = self.write();
        let o = &mut t.oauth;
        let mut out = Vec::new();
        for i in 0..o.grants.len() {
            if o.grants[i].company_id != company {
                continue;
            }
            let id = o.grants[i].id;
            let revoked_now = o.grants[i].revoked_at.is_none();
            if revoked_now {
                o.grants[i].revoked_at = Some(at);
            }
            for f in o.families.iter_mut().filter(|f| f.grant_id == id) {
                f.revoked_at.get_or_insert(at);
            }
            o.erase_answers(|a| a.grant_id == id);
            let app = o.grants[i].application_id;
            let native = o
                .applications
                .iter()
                .any(|a| a.app.id == app && a.app.template.is_some());
            out.push(CompanyGrant {
                id,
                revoked_now,
                native,
            });
        }
        Ok(out)
    }

    fn revoke_access_token(&self, digest: &SecretDigest, at: Timestamp) -> PortResult<bool> {
        self.count_call("revoke_access_token");
        let mut t = self.write();
        match t
            .oauth
            .access_tokens
            .iter_mut()
            .find(|x| &x.digest == digest && x.revoked_at.is_none())
        {
            Some(x) => {
                x.revoked_at = Some(at);
                t.oauth.erase_answers(|a| &a.access_digest == digest);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn prune_oauth(&self, before: Timestamp, spent_before: Timestamp) -> PortResult<u64> {
        self.count_call("prune_oauth");
        let mut t = self.write();
        let o = &mut t.oauth;
        let n = o.codes.len() + o.access_tokens.len() + o.refresh_tokens.len();
        o.codes.retain(|c| c.expires_at >= before);
        o.access_tokens.retain(|x| x.expires_at >= before);
        o.refresh_tokens
            .retain(|x| x.expires_at >= before && x.spent_at.is_none_or(|s| s >= spent_before));
        Ok((n - o.codes.len() - o.access_tokens.len() - o.refresh_tokens.len()) as u64)
    }
}

impl DpopReplayStore for MemStore {
    fn record_jti(&self, htu: &str, jti_digest: &str, keep_until: Timestamp) -> PortResult<bool> {
        self.count_call("record_jti");
        let mut t = self.write();
        let jtis = &mut t.oauth.jtis;
        if jtis.iter().any(|(h, j, _)| h == htu && j == jti_digest) {
            return Ok(false);
        }
        jtis.push((htu.to_owned(), jti_digest.to_owned(), keep_until));
        Ok(true)
    }

    fn access_token_recording_jti(
        &self,
        digest: &SecretDigest,
        proof: &JtiRecord<'_>,
    ) -> PortResult<(Option<Held<StoredToken>>, Option<bool>)> {
        self.count_call("access_token_recording_jti");
        let held = {
            let t = self.tables();
            let o = &t.oauth;
            match o.access_tokens.iter().find(|x| &x.digest == digest) {
                Some(x) => Some(o.held(x, x.family_id)?),
                None => None,
            }
        };
        let bound = held
            .as_ref()
            .is_some_and(|h| h.item.jkt.as_deref() == Some(proof.jkt));
        let recorded = if bound {
            let mut t = self.write();
            let jtis = &mut t.oauth.jtis;
            let seen = jtis
                .iter()
                .any(|(h, j, _)| h == proof.htu && j == proof.jti_digest);
            if !seen {
                jtis.push((
                    proof.htu.to_owned(),
                    proof.jti_digest.to_owned(),
                    proof.keep_until,
                ));
            }
            Some(!seen)
        } else {
            None
        };
        Ok((held, recorded))
    }

    fn prune_jtis(&self, before: Timestamp) -> PortResult<u64> {
        self.count_call("prune_jtis");
        let mut t = self.write();
        let n = t.oauth.jtis.len();
        t.oauth.jtis.retain(|(_, _, until)| *until >= before);
        Ok((n - t.oauth.jtis.len()) as u64)
    }
}

/// `save_authorization` on the held tables: every check before any write, so an error leaves
/// them as they were.
fn save_authorization_in(
    t: &mut Tables,
    grant: &Grant,
    family: &Family,
    code: &StoredCode,
) -> PortResult<Grant> {
    if !t.companies.iter().any(|(c, _)| c.id == grant.company_id) {
        return Err(Fault::new("foreign key: company"));
    }
    let o = &mut t.oauth;
    if !o
        .applications
        .iter()
        .any(|a| a.app.id == grant.application_id)
        || family.grant_id != grant.id
        || code.family_id != family.id
    {
        return Err(Fault::new("foreign key: application, grant or family"));
    }
    if o.families.iter().any(|f| f.id == family.id) {
        return Err(unique_violation("oauth_families.id"));
    }
    if o.codes.iter().any(|c| c.digest == code.digest) {
        return Err(unique_violation("oauth_codes.digest"));
    }
    let existing = o
        .grants
        .iter_mut()
        .find(|g| g.company_id == grant.company_id && g.application_id == grant.application_id);
    let in_force = match existing {
        Some(g) => {
            g.user_id = grant.user_id;
            g.scopes = grant.scopes.clone();
            g.bound_jkt = grant.bound_jkt.clone();
            g.updated_at = grant.updated_at;
            g.revoked_at = None;
            g.clone()
        }
        None => {
            if o.grants.iter().any(|g| g.id == grant.id) {
                return Err(unique_violation("oauth_grants.id"));
            }
            o.grants.push(grant.clone());
            grant.clone()
        }
    };
    o.families.push(Family {
        grant_id: in_force.id,
        ..family.clone()
    });
    o.codes.push(code.clone());
    Ok(in_force)
}
