import type { IncomingMessage, ServerResponse } from 'node:http';
import { jwksDocument } from './jwksDocument.js';
import type { SigningKeySet } from './SigningKeySet.js';

export type JwksHandlerOptions = {
  /**
   * How long relays and proxies may cache the document. Short, because a newly published key
   * must reach every relay before it starts signing.
   */
  maxAgeSeconds?: number;
};

/** A node:http handler serving the JWKS document (GET and HEAD; other methods get 405). */
export function createJwksHandler(
  keys: SigningKeySet,
  { maxAgeSeconds = 60 }: JwksHandlerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  // Serialized once per key list: `all` is a new list after each reload (SigningKeySet.reload).
  let servedFor: readonly unknown[] | null = null;
  let body = '';
  let length = '0';
  return (req, res) => {
    if (servedFor !== keys.all) {
      servedFor = keys.all;
      body = JSON.stringify(jwksDocument(keys));
      length = String(Buffer.byteLength(body));
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    res.writeHead(200, {
      'content-type': 'application/jwk-set+json',
      'content-length': length,
      'cache-control': `public, max-age=${maxAgeSeconds}`,
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}
