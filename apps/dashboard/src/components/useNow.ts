import { useEffect, useState } from 'react';

/** The browser's clock, re-read every `everyMs`: staleness and ages move although no snapshot comes. */
export function useNow(everyMs: number): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}
