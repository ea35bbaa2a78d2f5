/**
 * The operator credential from `#credential=<value>`: a fragment never leaves the browser, so the
 * server that serves the page never sees it (nor its logs, nor a Referer).
 */
export function credentialFromFragment(hash: string): string | undefined {
  const value = new URLSearchParams(hash.startsWith('#') ? hash.slice(1) : hash).get('credential');
  return value === null || value.trim() === '' ? undefined : value;
}
