// The merchant's consent in a real headless Chromium, driven over WebDriver (chromedriver's
// HTTP API, with Node's own fetch): the browser signs in on the server's page when it has no
// session yet, picks the company, approves, and is sent to the plugin's redirect URI. That
// URI is the plugin site's (`https://shop.example`), which this machine cannot reach: the
// browser's own network log (chromedriver's performance log) tells where it was sent, with
// the code and state, as the plugin's site would have received them.
//
// Input (environment): CHROMIUM and CHROMEDRIVER, the programs' paths.

import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { writeFileSync } from 'node:fs'
import * as oauth from 'oauth4webapi'
import { authorization, check, env, step } from './support.mjs'

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

// A WebDriver session in headless Chromium; `close()` ends it and chromedriver.
export const openChromium = async () => {
  const port = await freePort()
  // Its own process group, so that the browser it starts ends with it, whatever way this
  // script ends (a failed check included).
  const driver = spawn(env('CHROMEDRIVER'), [`--port=${port}`], { stdio: 'ignore', detached: true })
  const kill = () => {
    try {
      process.kill(-driver.pid, 'SIGKILL')
    } catch {}
  }
  process.on('exit', kill)
  const url = `http://127.0.0.1:${port}`
  const send = async (method, path, body) => {
    const res = await fetch(url + path, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const json = await res.json()
    if (!res.ok) throw new Error(`WebDriver ${method} ${path}: ${res.status} ${JSON.stringify(json.value)}`)
    return json.value
  }
  for (let i = 0; ; i++) {
    try {
      if ((await send('GET', '/status')).ready) break
    } catch (err) {
      if (i > 100) throw new Error(`chromedriver did not come up: ${err}`)
    }
    await sleep(100)
  }
  const { sessionId } = await send('POST', '/session', {
    capabilities: {
      alwaysMatch: {
        browserName: 'chrome',
        'goog:loggingPrefs': { performance: 'ALL' },
        'goog:chromeOptions': {
          binary: env('CHROMIUM'),
          args: [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-dev-shm-usage',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            '--no-first-run',
            '--hide-scrollbars',
            '--force-device-scale-factor=1',
            '--window-size=520,1200',
            // The plugin's site is not on this machine: fail at once, without a lookup.
            '--host-resolver-rules=MAP shop.example ~NOTFOUND',
          ],
        },
      },
    },
  })
  const s = (path) => `/session/${sessionId}${path}`
  const find = async (css) => {
    for (let i = 0; ; i++) {
      try {
        // A web element reference: one member, whose value is the element's id.
        return Object.values(await send('POST', s('/element'), { using: 'css selector', value: css }))[0]
      } catch (err) {
        if (i > 50) throw err
        await sleep(100)
      }
    }
  }
  return {
    goto: (to) => send('POST', s('/url'), { url: String(to) }),
    currentUrl: () => send('GET', s('/url')),
    text: (css) => find(css).then((el) => send('GET', s(`/element/${el}/text`))),
    type: (css, text) => find(css).then((el) => send('POST', s(`/element/${el}/value`), { text })),
    click: (css) => find(css).then((el) => send('POST', s(`/element/${el}/click`), {})),
    // The URLs the browser requested since the last call, from its own network log.
    requested: async () =>
      (await send('POST', s('/se/log'), { type: 'performance' }))
        .map((entry) => JSON.parse(entry.message).message)
        .filter((m) => m.method === 'Network.requestWillBeSent')
        .map((m) => m.params.request.url),
    screenshot: async (file) => writeFileSync(file, Buffer.from(await send('GET', s('/screenshot')), 'base64')),
    close: async () => {
      await send('DELETE', s('')).catch(() => {})
      kill()
    },
  }
}

// The merchant approves `client` for `companyId` in Chromium `c`, signing in first when the
// browser has no session yet; `checkPage(text)` reads the consent page's text. Returns the
// authorization response's parameters and the PKCE verifier, as `approve` in support.mjs.
export const approveInChromium = async (c, as, { client, redirectUri, scope, email, password, companyId, checkPage, screenshot }) => {
  const { verifier, state, authUrl } = await authorization(as, { client, redirectUri, scope })

  await c.goto(authUrl)
  if (new URL(await c.currentUrl()).pathname.endsWith('/signin')) {
    await c.type('input[name="email"]', email)
    await c.type('input[name="password"]', password)
    await c.click('button[type="submit"]')
    step('signed_in_in_chromium')
  }
  // The sign-in form's POST answers 303 to the consent page; WebDriver's click may return
  // before that navigation ends, so the page is awaited (5 s), not read once.
  let at = new URL(await c.currentUrl())
  for (let i = 0; !at.pathname.endsWith('/oauth/authorize') && i < 50; i++) {
    await sleep(100)
    at = new URL(await c.currentUrl())
  }
  check(at.pathname.endsWith('/oauth/authorize'), `the consent page is shown (at ${at})`)
  checkPage(await c.text('main'))
  await c.click(`input[name="company_id"][value="${companyId}"]`)
  if (screenshot) await c.screenshot(screenshot)
  await c.requested()
  await c.click('button[name="decision"][value="approve"]')
  let sent
  for (let i = 0; !sent && i < 100; i++) {
    sent = (await c.requested()).find((u) => u.startsWith(`${redirectUri}?`))
    if (!sent) await sleep(100)
  }
  check(sent, `Chromium was sent to ${redirectUri}`)
  const params = oauth.validateAuthResponse(as, client, new URL(sent), state)
  step('approved_in_chromium', { redirect: redirectUri })
  return { params, verifier }
}
