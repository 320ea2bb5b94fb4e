//! Native platform templates: inserted once (a second insert of the identifier writes nothing
//! and says so, even two at once), read back exactly, unknown identifiers absent. Native
//! installations: written once with their application; their key moved by compare-and-set,
//! and swapped at consent together with the revocation of the old key's families. A company's
//! grants listed with their applications, last use and installations.

use std::sync::Barrier;
use std::thread;

use super::fixtures::*;
use super::oauth::{application, code, family, grant, token};
use crate::installations::ports::{InstallationStore, PlatformStore};
use crate::installations::{Installation, NativePlatform, NATIVE_SCOPES};
use crate::kernel::ids::ClientId;
use crate::oauth::ports::OAuthStore;
use crate::oauth::{ConnectedApp, InstalledSite, KeySwap, RegisteredKey, StoredApplication};
use crate::tenancy::ports::TenancyStore;

fn template(platform: &str, name: &str) -> NativePlatform {
    NativePlatform {
        platform: platform.into(),
        name: name.into(),
        icon_url: Some("https://cdn.example/icon.png".into()),
        support_url: None,
        scopes: NATIVE_SCOPES.to_vec(),
        created_at: ts(1_700_000_000_123),
    }
}

pub fn a_platform_template_is_written_once<S: PlatformStore + Sync>(store: &S) {
    let slug = format!("shop-{}", random_alnum(8).to_lowercase());
    let first = template(&slug, "Shop é Plugin");
    assert_eq!(store.platform(&slug).unwrap(), None);
    assert!(store.insert_platform(&first).unwrap());
    assert_eq!(store.platform(&slug).unwrap(), Some(first.clone()));
    // The same identifier again: nothing written, the first kept.
    assert!(!store
        .insert_platform(&template(&slug, "Another name"))
        .unwrap());
    assert_eq!(store.platform(&slug).unwrap(), Some(first));
    // Two at once: exactly one is written.
    let racing = format!("race-{}", random_alnum(8).to_lowercase());
    let barrier = Barrier::new(2);
    let wins: usize = thread::scope(|s| {
        let handles: Vec<_> = ["A", "B"]
            .into_iter()
            .map(|name| {
                let (barrier, racing) = (&barrier, &racing);
                s.spawn(move || {
                    barrier.wait();
                    usize::from(store.insert_platform(&template(racing, name)).unwrap())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(wins, 1);
    let stored = store.platform(&racing).unwrap().unwrap();
    assert!(["A", "B"].contains(&stored.name.as_str()));
    assert_eq!(stored.support_url, None);
    assert_eq!(stored.scopes, NATIVE_SCOPES.to_vec());
}

/// The ports the installation cases need.
pub trait Ports: PlatformStore + InstallationStore + TenancyStore + OAuthStore + Sync {}

impl<T: PlatformStore + InstallationStore + TenancyStore + OAuthStore + Sync> Ports for T {}

const OLD: &str = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I";
const NEW: &str = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs";

/// A native application with `OLD` accepted, and its installation of a new template.
fn native<S: Ports>(store: &S) -> (Installation, StoredApplication) {
    let slug = format!("woo-{}", random_alnum(8).to_lowercase());
    assert!(store.insert_platform(&template(&slug, "Woo")).unwrap());
    let mut app = application(true);
    app.app.client_id = ClientId::native_from_random(&random_alnum(32)).unwrap();
    app.app.template = Some(slug.clone());
    app.app.key = Some(RegisteredKey {
        accepted_jkt: OLD.into(),
        pending_jkt: None,
    });
    let installation = Installation {
        registration_id: random_alnum(43),
        platform: slug,
        application_id: app.app.id,
        client_id: app.app.client_id.clone(),
        site_url: "https://shop.example".into(),
        redirect_uri: "https://shop.example/pay/oauth/callback".into(),
        platform_version: Some("6.5".into()),
        plugin_version: None,
        site_name: Some("Shop é".into()),
        created_at: ts(T0),
        updated_at: ts(T0),
    };
    (installation, app)
}

/// An installation and its application are written together, once (even two at once), and
/// read back together; the metadata update changes the metadata alone.
pub fn an_installation_is_written_once_with_its_application<S: Ports>(store: &S) {
    let (installation, app) = native(store);
    let id = installation.registration_id.clone();
    assert_eq!(store.installation(&id).unwrap(), None);
    assert!(store.insert_installation(&installation, &app).unwrap());
    assert_eq!(
        store.installation(&id).unwrap(),
        Some((installation.clone(), app.clone()))
    );
    assert_eq!(
        store.application(&app.app.client_id).unwrap(),
        Some(app.clone())
    );
    // The same registration id with another application: nothing written.
    let mut other = application(true);
    other.app.template = app.app.template.clone();
    let second = Installation {
        application_id: other.app.id,
        client_id: other.app.client_id.clone(),
        ..installation.clone()
    };
    assert!(!store.insert_installation(&second, &other).unwrap());
    assert_eq!(store.application(&other.app.client_id).unwrap(), None);
    // Two at once: one installation, one application.
    let (racing, _) = native(store);
    let barrier = Barrier::new(2);
    let apps: Vec<StoredApplication> = (0..2)
        .map(|_| {
            let mut a = application(true);
            a.app.template = Some(racing.platform.clone());
            a
        })
        .collect();
    let wins: usize = thread::scope(|s| {
        let handles: Vec<_> = apps
            .iter()
            .map(|a| {
                let (barrier, racing) = (&barrier, &racing);
                s.spawn(move || {
                    let mine = Installation {
                        application_id: a.app.id,
                        client_id: a.app.client_id.clone(),
                        ..racing.clone()
                    };
                    barrier.wait();
                    usize::from(store.insert_installation(&mine, a).unwrap())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(wins, 1);
    let stored = apps
        .iter()
        .filter(|a| store.application(&a.app.client_id).unwrap().is_some())
        .count();
    assert_eq!(stored, 1);
    // Metadata only.
    let updated = Installation {
        platform_version: None,
        plugin_version: Some("1.1.0".into()),
        site_name: Some("Renamed".into()),
        site_url: "https://ignored.example".into(),
        ..installation.clone()
    };
    store
        .update_installation_metadata(&updated, ts(T0 + 5_000))
        .unwrap();
    let (read, _) = store.installation(&id).unwrap().unwrap();
    assert_eq!(
        read,
        Installation {
            platform_version: None,
            plugin_version: Some("1.1.0".into()),
            site_name: Some("Renamed".into()),
            updated_at: ts(T0 + 5_000),
            ..installation
        }
    );
}

fn key_of<S: Ports>(store: &S, app: &StoredApplication) -> RegisteredKey {
    store
        .application(&app.app.client_id)
        .unwrap()
        .unwrap()
        .app
        .key
        .unwrap()
}

/// The pending key is set (and cleared) only over the accepted key named; a consent with a
/// key swap moves it by compare-and-set, revokes every live family of the application's
/// grants and saves the authorization, all or nothing.
pub fn a_key_swap_at_consent_is_atomic<S: Ports>(store: &S) {
    let (installation, app) = native(store);
    assert!(store.insert_installation(&installation, &app).unwrap());
    let id = app.app.id;
    assert!(!store.set_pending_key(id, NEW, Some(OLD)).unwrap());
    assert!(store.set_pending_key(id, OLD, Some(NEW)).unwrap());
    assert_eq!(
        key_of(store, &app),
        RegisteredKey {
            accepted_jkt: OLD.into(),
            pending_jkt: Some(NEW.into()),
        }
    );
    // An ordinary application has no key to set.
    let plain = application(true);
    store.insert_application(&plain).unwrap();
    assert!(!store.set_pending_key(plain.app.id, OLD, Some(NEW)).unwrap());

    // The old key's family, on this company's grant and another's.
    let company_a = company(store);
    let g = grant(company_a, &app, T0);
    let f_old = family(&g, T0);
    let g = store
        .save_authorization(&g, &f_old, &code(&app, &f_old, T0))
        .unwrap();
    let access = token(&app, &f_old, T0, 900_000);
    let refresh = token(&app, &f_old, T0, 86_400_000);
    store.insert_tokens(&access, &refresh, None).unwrap();
    let g_b = grant(company(store), &app, T0);
    let f_b = family(&g_b, T0);
    let c_b = code(&app, &f_b, T0);
    store.save_authorization(&g_b, &f_b, &c_b).unwrap();
    // A plain application's family is not touched.
    let g_plain = grant(company_a, &plain, T0);
    let f_plain = family(&g_plain, T0);
    let c_plain = code(&plain, &f_plain, T0);
    store
        .save_authorization(&g_plain, &f_plain, &c_plain)
        .unwrap();

    let swap = KeySwap {
        from_jkt: OLD.into(),
        to_jkt: NEW.into(),
    };
    let mut again = grant(company_a, &app, T0 + 1_000);
    again.bound_jkt = Some(NEW.into());
    let f_new = family(&again, T0 + 1_000);
    // A stale swap (another pending key) writes nothing.
    let stale = KeySwap {
        to_jkt: "stale-stale-stale-stale-stale-stale-stale-".into(),
        ..swap.clone()
    };
    let c = code(&app, &f_new, T0 + 1_000);
    assert_eq!(
        store
            .save_authorization_with_key(&again, &f_new, &c, &stale)
            .unwrap(),
        None
    );
    assert!(store.code(&c.digest).unwrap().is_none());
    assert_eq!(key_of(store, &app).accepted_jkt, OLD);
    let held = store.refresh_token(&refresh.digest).unwrap().unwrap();
    assert_eq!(held.family.revoked_at, None);

    let in_force = store
        .save_authorization_with_key(&again, &f_new, &c, &swap)
        .unwrap()
        .unwrap();
    assert_eq!(in_force.id, g.id);
    assert_eq!(in_force.bound_jkt.as_deref(), Some(NEW));
    assert_eq!(
        key_of(store, &app),
        RegisteredKey {
            accepted_jkt: NEW.into(),
            pending_jkt: None,
        }
    );
    let held = store.access_token(&access.digest).unwrap().unwrap();
    assert_eq!(held.family.revoked_at, Some(ts(T0 + 1_000)));
    let held = store.refresh_token(&refresh.digest).unwrap().unwrap();
    assert_eq!(held.family.revoked_at, Some(ts(T0 + 1_000)));
    let other_company = store.code(&c_b.digest).unwrap().unwrap();
    assert_eq!(other_company.family.revoked_at, Some(ts(T0 + 1_000)));
    let new_code = store.code(&c.digest).unwrap().unwrap();
    assert_eq!(new_code.family.revoked_at, None);
    assert_eq!(new_code.grant.bound_jkt.as_deref(), Some(NEW));
    // Done once: the same swap again finds NEW accepted and writes nothing.
    let f_late = family(&again, T0 + 2_000);
    assert_eq!(
        store
            .save_authorization_with_key(&again, &f_late, &code(&app, &f_late, T0 + 2_000), &swap)
            .unwrap(),
        None
    );
    assert_eq!(
        store.code(&c.digest).unwrap().unwrap().family.revoked_at,
        None
    );
    let plain_code = store.code(&c_plain.digest).unwrap().unwrap();
    assert_eq!(plain_code.family.revoked_at, None);
}

/// A company's grants are listed newest first, revoked ones too, each with its application's
/// name and client id, its last use (the newest refresh token issued for it) and, for a native
/// installation's application, the installation's site; another company's are not.
pub fn a_company_lists_its_grants<S: Ports>(store: &S) {
    let company_a = company(store);
    assert_eq!(store.company_grants(company_a).unwrap(), vec![]);
    let plain = application(false);
    store.insert_application(&plain).unwrap();
    let g_plain = grant(company_a, &plain, T0);
    let f_plain = family(&g_plain, T0);
    let g_plain = store
        .save_authorization(&g_plain, &f_plain, &code(&plain, &f_plain, T0))
        .unwrap();
    let refresh = token(&plain, &f_plain, T0, 86_400_000);
    store
        .insert_tokens(&token(&plain, &f_plain, T0, 900_000), &refresh, None)
        .unwrap();
    // A refresh: its new tokens are the grant's last use.
    let rotated = token(&plain, &f_plain, T0 + 5_000, 86_400_000);
    assert!(store
        .rotate_refresh(
            &refresh.digest,
            &token(&plain, &f_plain, T0 + 5_000, 900_000),
            &rotated,
            ts(T0 + 5_000),
            None,
        )
        .unwrap());
    // A native installation's grant, newer, never exchanged.
    let (installation, app) = native(store);
    assert!(store.insert_installation(&installation, &app).unwrap());
    let mut g_native = grant(company_a, &app, T0 + 1_000);
    g_native.bound_jkt = Some(OLD.into());
    let f_native = family(&g_native, T0 + 1_000);
    let g_native = store
        .save_authorization(&g_native, &f_native, &code(&app, &f_native, T0 + 1_000))
        .unwrap();
    // Another company's grant of the same application.
    let g_other = grant(company(store), &plain, T0 + 2_000);
    let f_other = family(&g_other, T0 + 2_000);
    store
        .save_authorization(&g_other, &f_other, &code(&plain, &f_other, T0 + 2_000))
        .unwrap();

    let site = InstalledSite {
        platform: installation.platform.clone(),
        site_url: "https://shop.example".into(),
        site_name: Some("Shop é".into()),
    };
    let native_listed = ConnectedApp {
        grant: g_native.clone(),
        name: app.app.name.clone(),
        client_id: app.app.client_id.clone(),
        last_used_at: None,
        site: Some(site),
    };
    let plain_listed = ConnectedApp {
        grant: g_plain.clone(),
        name: "Shop connector é".into(),
        client_id: plain.app.client_id.clone(),
        last_used_at: Some(ts(T0 + 5_000)),
        site: None,
    };
    assert_eq!(
        store.company_grants(company_a).unwrap(),
        vec![native_listed.clone(), plain_listed.clone()]
    );
    assert!(native_listed.is_native() && !plain_listed.is_native());
    // A revoked grant is still listed, as revoked.
    assert!(store.revoke_grant(g_native.id, ts(T0 + 9_000)).unwrap());
    let listed = store.company_grants(company_a).unwrap();
    assert_eq!(listed[0].grant.revoked_at, Some(ts(T0 + 9_000)));
    assert_eq!(listed[1], plain_listed);
}
