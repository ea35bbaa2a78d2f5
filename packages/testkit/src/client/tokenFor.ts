import type { RelaySubscription, StreamName } from '@streamgate/protocol';

/** A relay token for `stream` as a product backend's `getToken()` returns it (the JWT is not checked by a scripted relay). */
export function tokenFor<T>(stream: StreamName, token = 'jwt-1', expiresInMs = 600_000): RelaySubscription<T> {
  return { token, stream, expiresAt: Date.now() + expiresInMs };
}
