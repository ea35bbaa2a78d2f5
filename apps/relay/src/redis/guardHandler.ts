import { toError } from './redisFailure.js';

/**
 * An ioredis event listener that cannot throw: what throws inside an EventEmitter handler is an
 * uncaught exception and would end the process (every stream of every target). Told to `onError`
 * (logged and counted) instead.
 */
export function guardHandler<A extends unknown[]>(run: (...args: A) => void, onError: (error: Error) => void): (...args: A) => void {
  return (...args: A) => {
    try {
      run(...args);
    } catch (thrown) {
      onError(toError(thrown));
    }
  };
}
