// A real OpenID Provider (the certified npm `oidc-provider`) on loopback, for the nomos-auth
// tests. Not for production: it auto-approves every login and keeps everything in memory.
//
//   node server.mjs --port N [--access-ttl 6] [--keys FILE]
//
// --port 0 picks a free port. When listening it prints one line to stdout:
//   READY http://127.0.0.1:<port>
// --keys FILE keeps the signing key across restarts (a restart then "forgets" every session,
// grant and token, as the in-memory adapter does, but old ID tokens still verify).
//
// Configuration that matters to the tests:
// - one public native client `nomos-test` (no secret, PKCE S256 required), loopback redirect
//   http://127.0.0.1/callback (any port, RFC 8252);
// - refresh tokens rotate on every use; presenting a used one revokes the whole grant;
// - access tokens for the resource `urn:nomos:gateway` are JWTs (RFC 9068) living
//   --access-ttl seconds, so a test gateway can verify them against the JWKS;
// - clockTolerance 0: an expired token is expired;
// - login and consent are approved automatically (account `operator`);
// - /__test/stats counts refreshes, refresh errors and revoked grants.

import { createServer } from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import Provider, { errors } from 'oidc-provider';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'access-ttl': { type: 'string', default: '6' },
    keys: { type: 'string' },
  },
});

const CLIENT_ID = 'nomos-test';
const RESOURCE = 'urn:nomos:gateway';
const ACCOUNT = 'operator';
const accessTtl = Number.parseInt(args['access-ttl'], 10);

function signingKeys() {
  if (args.keys && existsSync(args.keys)) {
    return JSON.parse(readFileSync(args.keys, 'utf8'));
  }
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-rs256', alg: 'RS256', use: 'sig' };
  const jwks = { keys: [jwk] };
  if (args.keys) writeFileSync(args.keys, JSON.stringify(jwks), { mode: 0o600 });
  return jwks;
}

const stats = {
  refreshes: 0,
  refresh_errors: 0,
  invalid_grants: 0,
  grants_revoked: 0,
  codes_exchanged: 0,
};

let provider;
const server = createServer((req, res) => {
  if (req.url === '/__test/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(stats));
    return;
  }
  if (req.method === 'GET' && req.url.startsWith('/interaction/')) {
    autoApprove(req, res).catch((err) => {
      console.error('interaction failed:', err.message);
      res.writeHead(500);
      res.end('interaction failed');
    });
    return;
  }
  provider.callback()(req, res);
});

// Login and consent in one step: whatever the prompt asks for is granted to `operator`.
async function autoApprove(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, grantId } = details;
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({ accountId: ACCOUNT, clientId: params.client_id });
  const { missingOIDCScope = [], missingOIDCClaims = [], missingResourceScopes = {} } =
    prompt.details;
  if (missingOIDCScope.length) grant.addOIDCScope(missingOIDCScope.join(' '));
  if (missingOIDCClaims.length) grant.addOIDCClaims(missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missingResourceScopes)) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const savedGrantId = await grant.save();
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId: ACCOUNT }, consent: { grantId: savedGrantId } },
    { mergeWithLastSubmission: false },
  );
}

server.listen(Number.parseInt(args.port, 10), '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        token_endpoint_auth_method: 'none',
        application_type: 'native',
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
    jwks: signingKeys(),
    pkce: { required: () => true },
    clockTolerance: 0,
    scopes: ['openid', 'offline_access', 'profile', 'email', 'gateway'],
    claims: {
      openid: ['sub'],
      profile: ['name'],
      email: ['email', 'email_verified'],
    },
    rotateRefreshToken: true,
    ttl: {
      AccessToken: accessTtl,
      AuthorizationCode: 60,
      IdToken: 3600,
      RefreshToken: 24 * 3600,
      Grant: 24 * 3600,
      Interaction: 600,
      Session: 24 * 3600,
    },
    features: {
      devInteractions: { enabled: false },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== RESOURCE) throw new errors.InvalidTarget();
          return {
            scope: 'gateway',
            audience: RESOURCE,
            accessTokenTTL: accessTtl,
            accessTokenFormat: 'jwt',
          };
        },
      },
    },
    findAccount: (_ctx, sub) => ({
      accountId: sub,
      claims: () => ({
        sub,
        name: 'Test Operator',
        email: 'operator@nomos.test',
        email_verified: true,
      }),
    }),
    renderError: (ctx, out) => {
      ctx.type = 'application/json';
      ctx.body = out;
    },
  });

  // Counters only; never a token.
  provider.on('grant.success', (ctx) => {
    const gty = ctx.oidc.params.grant_type;
    if (gty === 'refresh_token') stats.refreshes += 1;
    if (gty === 'authorization_code') stats.codes_exchanged += 1;
  });
  provider.on('grant.error', (ctx, err) => {
    if (ctx.oidc.params?.grant_type === 'refresh_token') stats.refresh_errors += 1;
    if (err.error === 'invalid_grant') stats.invalid_grants += 1;
  });
  provider.on('grant.revoked', () => {
    stats.grants_revoked += 1;
  });

  process.stdout.write(`READY ${issuer}\n`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close();
    process.exit(0);
  });
}
