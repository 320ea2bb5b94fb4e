// What the Node clients of the tests share (flow.mjs: an ordinary partner app; native.mjs: a
// native installation): environment, step lines, checks, a cookie-keeping browser, and the
// merchant's sign-in and approval on the server's own pages.

import * as oauth from 'oauth4webapi'
import * as DPoP from 'dpop'

export const env = (name) => {
  const v = process.env[name]
  if (!v) throw new Error(`${name} is required`)
  return v
}
export const step = (name, detail = {}) => console.log(JSON.stringify({ step: name, ...detail }))
export const check = (ok, what) => {
  if (!ok) throw new Error(`check failed: ${what}`)
}
// The tests run the server over http on loopback; a production issuer is https.
export const insecure = { [oauth.allowInsecureRequests]: true }

// RFC 9449 section 8: a server may ask for a nonce (`use_dpop_nonce`); oauth4webapi's DPoP
// handle keeps the `DPoP-Nonce` the server sent, so the request is retried once.
export const withNonceRetry = async (send) => {
  try {
    return await send()
  } catch (err) {
    if (oauth.isDPoPNonceError(err)) {
      step('dpop_nonce_retry')
      return await send()
    }
    throw err
  }
}

const unescapeHtml = (s) =>
  s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
const inputs = (html) =>
  [...html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((m) => [
    unescapeHtml(m[1]),
    unescapeHtml(m[2]),
  ])

// A browser on `base`: it keeps its cookies and never follows redirects.
export const browser = (base) => {
  const origin = new URL(base).origin
  const cookies = new Map()
  const browse = async (url, init = {}) => {
    const headers = new Headers(init.headers)
    if (cookies.size) headers.set('cookie', [...cookies].map(([k, v]) => `${k}=${v}`).join('; '))
    const res = await fetch(url, { ...init, headers, redirect: 'manual' })
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';')
      const i = pair.indexOf('=')
      cookies.set(pair.slice(0, i), pair.slice(i + 1))
    }
    return res
  }
  const formPost = (url, pairs) =>
    browse(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: new URLSearchParams(pairs).toString(),
    })
  return { browse, formPost, signedIn: () => cookies.has('pay_session') }
}

// The merchant approves `clientId` for `companyId` on the server's pages, signing in first
// when the browser has no session yet; `checkPage(html)` looks at the consent page. Returns
// the authorization response's parameters and the PKCE verifier.
// A fresh PKCE verifier and state, and the authorization URL that carries them.
export const authorization = async (as, { client, redirectUri, scope }) => {
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const authUrl = new URL(as.authorization_endpoint)
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirectUri,
    scope,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  })) authUrl.searchParams.set(k, v)
  return { verifier, state, authUrl }
}

export const approve = async (b, as, { base, client, redirectUri, scope, email, password, companyId, checkPage }) => {
  const { verifier, state, authUrl } = await authorization(as, { client, redirectUri, scope })

  let res = await b.browse(authUrl)
  if (!b.signedIn()) {
    check(res.status === 303, `authorize without a session answers 303 (got ${res.status})`)
    const signinUrl = new URL(res.headers.get('location'), base)
    check(signinUrl.pathname.endsWith('/signin'), 'sent to the sign-in page')
    res = await b.browse(signinUrl)
    const signinHtml = await res.text()
    check(res.status === 200 && signinHtml.includes('name="password"'), 'the sign-in page shows its form')
    res = await b.formPost(new URL('/signin', base), [['email', email], ['password', password], ...inputs(signinHtml)])
    check(res.status === 303 && b.signedIn(), `sign-in answers 303 with a session (got ${res.status})`)
    step('signed_in')
    res = await b.browse(new URL(res.headers.get('location'), base))
  }
  const consentHtml = await res.text()
  check(res.status === 200, `consent page answers 200 (got ${res.status})`)
  check(consentHtml.includes(`value="${companyId}"`), 'the company is offered')
  checkPage(consentHtml)
  res = await b.formPost(new URL('/oauth/authorize', base), [
    ...inputs(consentHtml),
    ['company_id', companyId],
    ['decision', 'approve'],
  ])
  check(res.status === 303, `approval answers 303 (got ${res.status})`)
  const callback = new URL(res.headers.get('location'))
  check(callback.origin + callback.pathname === redirectUri, 'back to the registered redirect URI')
  const params = oauth.validateAuthResponse(as, client, callback, state)
  step('approved', { redirect: callback.origin + callback.pathname })
  return { params, verifier }
}

// The payment routes with `Authorization: DPoP` and a fresh proof of `keyPair` per request,
// retried once with the server's nonce when it asks for one (`use_dpop_nonce`).
export const dpopApi = (base, keyPair) => {
  let nonce
  const call = async (method, path, accessToken, body, extraHeaders = {}) => {
    const url = `${base}${path}`
    for (let attempt = 0; ; attempt++) {
      const proof = await DPoP.generateProof(keyPair, url, method, nonce, accessToken)
      const headers = { ...extraHeaders, authorization: `DPoP ${accessToken}`, dpop: proof }
      if (body) headers['content-type'] = 'application/json'
      const r = await fetch(url, { method, headers, body: body && JSON.stringify(body) })
      const challenge = r.headers.get('www-authenticate') ?? ''
      if (r.status === 401 && challenge.includes('use_dpop_nonce') && attempt === 0) {
        nonce = r.headers.get('dpop-nonce')
        check(nonce, 'a use_dpop_nonce answer carries DPoP-Nonce')
        step('dpop_nonce_retry', { path })
        continue
      }
      return { status: r.status, challenge, json: await r.json().catch(() => null) }
    }
  }
  return { call, nonce: () => nonce }
}
