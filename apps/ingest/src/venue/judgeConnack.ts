/**
 * What a CONNACK's non-zero return code (MQTT 3.1.1 §3.2.2.3) means at this venue, decided per
 * code here and nowhere else, so that the session's redial, the `session_refused` notice and the
 * final `app_key_refused` cannot drift apart.
 */
export type ConnackRefusal =
  /**
   * 4, bad user name or password: the username is the app key, so the venue does not accept the
   * key. No redial and no other session can change that; the feed stops under the key.
   */
  | { code: 'key_refused'; retryable: false; returnCode: number; message: string }
  /**
   * Any other code: the session keeps redialling with backoff. `retryable` says whether the code
   * clears by itself (3, and 5, which is this venue's answer to a key's sixth session); one that
   * does not (1, 2, a code 3.1.1 does not define) is about this client, not the key, and gets
   * one `session_refused` notice.
   */
  | { code: 'refused'; retryable: boolean; returnCode: number; message: string };

export function judgeConnack(returnCode: number): ConnackRefusal {
  const refused = (retryable: boolean, text: string): ConnackRefusal => ({
    code: 'refused',
    retryable,
    returnCode,
    message: `CONNACK refused: ${text}`,
  });
  switch (returnCode) {
    case 1:
      return refused(false, 'unacceptable protocol version');
    case 2:
      return refused(false, 'client id rejected');
    case 3:
      return refused(true, 'server unavailable');
    case 4:
      // The text names the code, never the key (it reaches logs and notices).
      return { code: 'key_refused', retryable: false, returnCode, message: 'CONNACK refused: bad user name or password (the app key)' };
    case 5:
      // The session cap per key: what another session closing (or another worker's) frees.
      return refused(true, 'not authorized (session limit for this app key)');
    default:
      return refused(false, `return code ${returnCode}`);
  }
}
