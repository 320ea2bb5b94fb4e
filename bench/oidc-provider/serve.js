// The reference DPoP implementation for bench/dpop.py: oidc-provider serving its userinfo
// endpoint (`GET /me`) on 127.0.0.1:$PORT, one Node process, its own in-memory store (the
// default adapter, which also holds its DPoP replay set). It issues one DPoP-bound access token
// (`openid` scope, `jkt` = $JKT, the thumbprint of the benchmark's key) through the provider's
// own models, and prints {"token": ...} once it listens. Every request then goes through the
// provider's whole userinfo chain: proof verification (jose), htm/htu/iat/ath checks, the
// token lookup, the `jti` replay check, the jkt binding, client, account and grant.
import { Provider } from 'oidc-provider';

const port = Number(process.env.PORT);
const jkt = process.env.JKT;
if (!port || !jkt) {
  console.error('PORT and JKT are needed');
  process.exit(2);
}
const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  clients: [{
    client_id: 'bench',
    token_endpoint_auth_method: 'none',
    redirect_uris: ['http://127.0.0.1:9/cb'],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    dpop_bound_access_tokens: true,
  }],
  findAccount: (ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  features: { dPoP: { enabled: true }, devInteractions: { enabled: false } },
});
// No log line per request.
provider.on('server_error', (ctx, err) => console.error(err));

const client = await provider.Client.find('bench');
const grant = new provider.Grant({ accountId: 'bench-user', clientId: client.clientId });
grant.addOIDCScope('openid');
const grantId = await grant.save();
const token = new provider.AccessToken({
  accountId: 'bench-user',
  client,
  grantId,
  scope: 'openid',
  expiresIn: 3600,
});
token.jkt = jkt;
const value = await token.save();

provider.listen(port, '127.0.0.1', () => {
  console.log(JSON.stringify({ token: value, pid: process.pid }));
});
