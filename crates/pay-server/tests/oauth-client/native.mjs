// A native installation driven by the real client libraries, as a store plugin would: the
// `dpop` package makes the keys and every proof (registration, `DPoP-Previous`, the payment
// routes), oauth4webapi the code exchange and refresh, and the merchant consents in a real
// headless Chromium (chromium.mjs). Run by crates/pay-server/tests/oauth_client.rs against a
// started server with a platform template.
//
// Input (environment): PAY_BASE (the server's base URL, issuer and PAY_AUTH_URL), PLATFORM,
// PLATFORM_NAME (the template's), EMAIL, PASSWORD, COMPANY_ID, ALG (`ES256` or `Ed25519`),
// CHROMIUM and CHROMEDRIVER (the programs' paths), and optionally SCREENSHOT (a path: the
// consent page is written there as a PNG).
// Output: one JSON line per step on stdout; exit status 0 only when every check held.

import { randomBytes } from 'node:crypto'
import * as oauth from 'oauth4webapi'
import * as DPoP from 'dpop'
import { check, dpopApi, env, insecure, step, withNonceRetry } from './support.mjs'
import { approveInChromium, openChromium } from './chromium.mjs'

const base = env('PAY_BASE').replace(/\/$/, '')
const issuer = new URL(base)
const alg = env('ALG')
const site = 'https://shop.example'
const redirectUri = `${site}/pay/oauth/callback`
const scope = 'company:read pay:payment-links:read pay:payment-links:write pay:webhooks:read pay:webhooks:write'
const companyId = env('COMPANY_ID')

// RFC 7638 thumbprint of a key pair's public key: the required members, sorted, SHA-256.
const thumbprint = async (keyPair) => {
  const jwk = await crypto.subtle.exportKey('jwk', keyPair.publicKey)
  const members = jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x }
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(JSON.stringify(members)))
  return Buffer.from(digest).toString('base64url')
}

// --- Key and registration id, then register (201) and again (200) -----------------------
const registrationId = randomBytes(32).toString('base64url')
const oldKey = await DPoP.generateKeyPair(alg)
const registerUrl = `${base}/oauth/native/installations`
// With server nonces on, the first answer is `use_dpop_nonce` with the nonce to put in both
// proofs: retried once, and the nonce kept.
let registerNonce
const register = async (keyPair, previousKeyPair) => {
  const body = JSON.stringify({
    platform: env('PLATFORM'),
    registrationId,
    siteUrl: site,
    redirectUri,
    dpopJkt: await thumbprint(keyPair),
    platformVersion: '6.5.2',
    pluginVersion: '1.0.0',
    siteName: 'Totally Not A Bank',
  })
  for (let attempt = 0; ; attempt++) {
    const headers = { 'content-type': 'application/json', dpop: await DPoP.generateProof(keyPair, registerUrl, 'POST', registerNonce) }
    if (previousKeyPair) {
      headers['dpop-previous'] = await DPoP.generateProof(previousKeyPair, registerUrl, 'POST', registerNonce)
    }
    const res = await fetch(registerUrl, { method: 'POST', headers, body })
    const challenge = res.headers.get('www-authenticate') ?? ''
    if (res.status === 401 && challenge.includes('use_dpop_nonce') && attempt === 0) {
      registerNonce = res.headers.get('dpop-nonce')
      check(registerNonce, 'a use_dpop_nonce answer carries DPoP-Nonce')
      step('dpop_nonce_retry', { path: 'register' })
      continue
    }
    return { status: res.status, challenge, json: await res.json() }
  }
}
let r = await register(oldKey)
check(r.status === 201, `first registration answers 201 (got ${r.status} ${JSON.stringify(r.json)})`)
const registered = r.json
check(registered.client_id.startsWith('svc_app_') && registered.client_type === 'public' && registered.dpop_bound === true, 'a public, DPoP-bound svc_app_ client')
check(registered.redirect_uri === redirectUri && registered.registration_id === registrationId, 'the redirect URI and registration id')
step('registered', registered)
r = await register(oldKey)
check(r.status === 200 && JSON.stringify(r.json) === JSON.stringify(registered), `re-registration answers 200 with the same client (got ${r.status})`)
step('registered_again')

// --- Consent on the server's pages, tokens, a payment link, a webhook subscription ---------
const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oauth2' }))
const client = { client_id: registered.client_id, token_endpoint_auth_method: 'none' }
const chromium = await openChromium()
let consents = 0
const consent = () =>
  approveInChromium(chromium, as, {
    client,
    redirectUri,
    scope,
    email: env('EMAIL'),
    password: env('PASSWORD'),
    companyId,
    checkPage: (text) => {
      check(text.includes(env('PLATFORM_NAME')), "the consent page shows the template's name")
      check(!text.includes('Totally Not A Bank'), 'never the siteName')
    },
    // The first consent's page, as the merchant sees it.
    screenshot: consents++ === 0 ? process.env.SCREENSHOT : undefined,
  })
// One DPoP handle per key: it keeps the nonce the server sent for the retry.
const handles = new WeakMap()
const dpopOf = (keyPair) => {
  if (!handles.has(keyPair)) handles.set(keyPair, oauth.DPoP(client, keyPair))
  return handles.get(keyPair)
}
const redeem = async (keyPair, { params, verifier }) =>
  withNonceRetry(async () =>
    oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, {
        DPoP: dpopOf(keyPair),
        ...insecure,
      }),
    ),
  )
const refresh = async (keyPair, token) =>
  withNonceRetry(async () =>
    oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), token, { DPoP: dpopOf(keyPair), ...insecure }),
    ),
  )
const refused = async (what, send) => {
  try {
    await send()
  } catch (err) {
    return err
  }
  throw new Error(`check failed: ${what} was accepted`)
}

let oldTokens = await redeem(oldKey, await consent())
check(oldTokens.token_type === 'dpop' && oldTokens.scope === scope, `DPoP tokens with the native scopes (got ${oldTokens.token_type} ${oldTokens.scope})`)
step('token')
const oldApi = dpopApi(base, oldKey).call
r = await oldApi('POST', '/api/partner/v1/pay/payment-links', oldTokens.access_token, { title: 'Order 1', amount: '12.50', currency: 'USDC' })
check(r.status === 201, `create link answers 201 (got ${r.status} ${JSON.stringify(r.json)})`)
step('link', { uid: r.json.uid })
r = await oldApi('PUT', '/api/partner/v1/pay/webhook-subscriptions/current', oldTokens.access_token,
  { url: 'https://hooks.shop.example/pay' }, { 'idempotency-key': 'native-hook-1' })
check(r.status === 201 && r.json.signingSecret?.startsWith('whsec_'), `webhook subscription answers 201 (got ${r.status})`)
step('webhook_subscription', { active: r.json.active })

// --- Rotate the key: DPoP (new key) + DPoP-Previous (registered key), then consent ---------
const newKey = await DPoP.generateKeyPair(alg)
r = await register(newKey)
check(r.status === 401 && r.challenge.startsWith('DPoP error="invalid_dpop_proof"'), `a new key without DPoP-Previous is refused (got ${r.status})`)
r = await register(newKey, newKey)
check(r.status === 401 && r.challenge.startsWith('DPoP error="invalid_dpop_proof"'), `DPoP-Previous by the new key itself is refused (got ${r.status})`)
r = await register(newKey, oldKey)
check(r.status === 200 && JSON.stringify(r.json) === JSON.stringify(registered), `the rotation answers 200 with the same client (got ${r.status})`)
step('rotation_registered')
// Until consent the old family works.
oldTokens = await refresh(oldKey, oldTokens.refresh_token)
r = await oldApi('GET', '/api/partner/v1/pay/company', oldTokens.access_token)
check(r.status === 200, `the old family works until consent (got ${r.status})`)
const approval = await consent()
// Consent accepted the new key and revoked the old family.
let err = await refused('the old refresh token', () => refresh(oldKey, oldTokens.refresh_token))
check(err instanceof oauth.ResponseBodyError && err.error === 'invalid_grant', `the old refresh token: invalid_grant (got ${err})`)
r = await oldApi('GET', '/api/partner/v1/pay/company', oldTokens.access_token)
check(r.status === 401, `the old access token is revoked (got ${r.status})`)
step('old_family_revoked')
err = await refused('the old key redeeming the new code', () => redeem(oldKey, approval))
check(err instanceof oauth.ResponseBodyError && err.error === 'invalid_dpop_proof', `the old key cannot redeem (got ${err})`)
const newTokens = await redeem(newKey, approval)
const newApi = dpopApi(base, newKey).call
r = await newApi('POST', '/api/partner/v1/pay/payment-links', newTokens.access_token, { title: 'Order 2', amount: '5.00', currency: 'USDC' })
check(r.status === 201, `the new family creates links (got ${r.status})`)
const refreshed = await refresh(newKey, newTokens.refresh_token)
r = await newApi('GET', '/api/partner/v1/pay/webhook-subscriptions/current', refreshed.access_token)
check(r.status === 200 && r.json.active === true, `the grant keeps its webhook subscription (got ${r.status})`)
step('new_family_works', { uid: r.json.id })
await chromium.close()
step('done')
