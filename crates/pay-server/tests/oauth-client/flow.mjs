// A third-party OAuth client driving the server as a partner app would: oauth4webapi for the
// authorization server (discovery, PKCE, code exchange, refresh, revocation; its DPoP handle
// signs the token requests) and the `dpop` package for the proofs of the payment routes. Run by
// crates/pay-server/tests/oauth_client.rs against a started server.
//
// Input (environment): PAY_BASE (the server's base URL and issuer), CLIENT_ID, REDIRECT_URI,
// EMAIL, PASSWORD (the merchant who signs in and approves on the real pages), COMPANY_ID (the
// company to pick), ALG (`ES256` or `Ed25519`), END (`reuse`: detect rotation by presenting the
// spent refresh token; `revoke`: revoke the live refresh token).
// Output: one JSON line per step on stdout; exit status 0 only when every check held.

import * as oauth from 'oauth4webapi'
import * as DPoP from 'dpop'
import { approve, browser, check, dpopApi, env, insecure, step, withNonceRetry } from './support.mjs'

const base = env('PAY_BASE').replace(/\/$/, '')
const issuer = new URL(base)
const clientId = env('CLIENT_ID')
const redirectUri = env('REDIRECT_URI')
const alg = env('ALG')
const end = env('END')
const scope = 'company:read pay:payment-links:read pay:payment-links:write'

// --- Discovery ------------------------------------------------------------------------------
const as = await oauth.processDiscoveryResponse(
  issuer,
  await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oauth2' }),
)
check(as.dpop_signing_alg_values_supported?.includes(alg), `metadata lists ${alg}`)
check(as.code_challenge_methods_supported?.includes('S256'), 'metadata lists S256')
step('discovery', { token_endpoint: as.token_endpoint, algs: as.dpop_signing_alg_values_supported })

const client = { client_id: clientId, token_endpoint_auth_method: 'none' }
const clientAuth = oauth.None()
const keyPair = await DPoP.generateKeyPair(alg)
const dpopHandle = oauth.DPoP(client, keyPair)

// --- Authorization request: sign in and approve on the server's own pages --------------------
const companyId = env('COMPANY_ID')
const { params, verifier } = await approve(browser(base), as, {
  base,
  client,
  redirectUri,
  scope,
  email: env('EMAIL'),
  password: env('PASSWORD'),
  companyId,
  checkPage: (html) =>
    check(html.includes('See your company') && html.includes('Create payment links'), 'scopes shown in words'),
})

// --- Code exchange with PKCE and DPoP -----------------------------------------------------
let tokens = await withNonceRetry(async () =>
  oauth.processAuthorizationCodeResponse(
    as,
    client,
    await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, verifier, {
      DPoP: dpopHandle,
      ...insecure,
    }),
  ),
)
check(tokens.token_type === 'dpop', `token_type DPoP (got ${tokens.token_type})`)
check(typeof tokens.refresh_token === 'string', 'a refresh token')
step('token', { token_type: tokens.token_type, scope: tokens.scope, expires_in: tokens.expires_in })

// --- Payment routes with `dpop` proofs ----------------------------------------------------
const resource = dpopApi(base, keyPair)
const api = resource.call
const proofHeader = JSON.parse(
  Buffer.from((await DPoP.generateProof(keyPair, base, 'GET')).split('.')[0], 'base64url'),
)
step('proof_alg', { alg: proofHeader.alg })

let r = await api('POST', '/api/partner/v1/pay/payment-links', tokens.access_token, {
  title: `Order via ${alg}`,
  amount: '12.50',
  currency: 'USDC',
})
check(r.status === 201, `create link answers 201 (got ${r.status} ${JSON.stringify(r.json)})`)
const uid = r.json.uid
r = await api('GET', `/api/partner/v1/pay/payment-links/${uid}`, tokens.access_token)
check(r.status === 200 && r.json.uid === uid, `read link answers 200 (got ${r.status})`)
step('link', { uid, status: r.json.status })
r = await api('GET', '/api/partner/v1/pay/company', tokens.access_token)
check(r.status === 200 && r.json.id === companyId, `company answers 200 (got ${r.status})`)
step('company', { id: r.json.id, name: r.json.name })
// A proof sent twice is a replay.
{
  const url = `${base}/api/partner/v1/pay/payment-links/${uid}`
  const proof = await DPoP.generateProof(keyPair, url, 'GET', resource.nonce(), tokens.access_token)
  const headers = { authorization: `DPoP ${tokens.access_token}`, dpop: proof }
  const first = await fetch(url, { headers })
  const second = await fetch(url, { headers })
  check(first.status === 200 && second.status === 401, `replayed proof refused (got ${first.status}, ${second.status})`)
  check((second.headers.get('www-authenticate') ?? '').startsWith('DPoP error="invalid_dpop_proof"'), 'replay challenge')
  step('replay_refused')
}

// --- Refresh: rotation --------------------------------------------------------------------
const refresh = async (token) =>
  withNonceRetry(async () =>
    oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, token, { DPoP: dpopHandle, ...insecure }),
    ),
  )
const first = tokens
tokens = await refresh(first.refresh_token)
check(tokens.refresh_token && tokens.refresh_token !== first.refresh_token, 'a new refresh token')
r = await api('GET', `/api/partner/v1/pay/payment-links/${uid}`, tokens.access_token)
check(r.status === 200, `the refreshed access token works (got ${r.status})`)
step('refreshed')

const refusedGrant = async (token, what) => {
  try {
    await refresh(token)
  } catch (err) {
    check(err instanceof oauth.ResponseBodyError && err.error === 'invalid_grant', `${what}: invalid_grant (got ${err})`)
    return
  }
  throw new Error(`check failed: ${what} was accepted`)
}

if (end === 'reuse') {
  // The spent refresh token again: rotation detected, the whole family revoked.
  await refusedGrant(first.refresh_token, 'the spent refresh token')
  await refusedGrant(tokens.refresh_token, 'the live refresh token after reuse')
  r = await api('GET', `/api/partner/v1/pay/payment-links/${uid}`, tokens.access_token)
  check(r.status === 401 && r.challenge.includes('invalid_token'), `the family's access token is revoked (got ${r.status})`)
  step('rotation_detected')
} else {
  const revoked = await oauth.revocationRequest(as, client, clientAuth, tokens.refresh_token, insecure)
  await oauth.processRevocationResponse(revoked)
  await refusedGrant(tokens.refresh_token, 'the revoked refresh token')
  r = await api('GET', `/api/partner/v1/pay/payment-links/${uid}`, tokens.access_token)
  check(r.status === 401 && r.challenge.includes('invalid_token'), `the family's access token is revoked (got ${r.status})`)
  step('revoked')
}
step('done')
