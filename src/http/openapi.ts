/** The OpenAPI document's header; paths come from the route schemas (served at /openapi.json). */
export function openApiInfo(baseUrl: string) {
  return {
    openapi: '3.0.3',
    info: {
      title: 'Kassir merchant and operator API',
      version: '1.0.0',
      description:
        'Merchant API (`/v1`): every request except `GET /v1/public/banks` carries `X-Identity` (the terminal API key) and ' +
        '`X-Signature` = base64(HMAC-SHA1(secret_key, METHOD + URL + BODY)), where URL is the public base URL plus the path ' +
        'and query string exactly as sent and BODY the raw request bytes. Operator API (`/admin/v1`): `Authorization: Bearer <ADMIN_TOKEN>` ' +
        '(every route), or a person signed in with `POST /auth/v1/login` (the `kassir_session` cookie, and `X-CSRF-Token` on changes): ' +
        'each operator route says which role it needs; risky ones answer `403 AUTH_004` until `POST /auth/v1/confirm`. ' +
        'Errors always have the body `{error, message, data?}`.',
    },
    servers: [{ url: baseUrl }],
    components: {
      securitySchemes: {
        identity: { type: 'apiKey' as const, in: 'header' as const, name: 'X-Identity' },
        signature: { type: 'apiKey' as const, in: 'header' as const, name: 'X-Signature' },
        operator: { type: 'http' as const, scheme: 'bearer' },
        session: { type: 'apiKey' as const, in: 'cookie' as const, name: 'kassir_session' },
        csrf: { type: 'apiKey' as const, in: 'header' as const, name: 'X-CSRF-Token' },
      },
    },
  };
}
