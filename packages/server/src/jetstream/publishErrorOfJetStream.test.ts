import { describe, expect, it } from 'vitest';
import type { PublishErrorCode } from '../PublishError.js';
import type { JetStreamPublishError } from './JetStreamPublishError.js';
import { publishErrorOfJetStream } from './publishErrorOfJetStream.js';

describe('publishErrorOfJetStream', () => {
  it('keeps retryable, written and the message, under the publisher codes', () => {
    const cases: Array<[JetStreamPublishError, PublishErrorCode, boolean, string]> = [
      [{ code: 'jetstream_unavailable', retryable: true, written: 'unknown', message: 'm1' }, 'redis_unavailable', true, 'unknown'],
      [{ code: 'jetstream_unavailable', retryable: true, written: 'no', message: 'm2' }, 'redis_unavailable', true, 'no'],
      [{ code: 'jetstream_stream_missing', retryable: false, written: 'no', subject: 'S.x', message: 'm3' }, 'redis_rejected', false, 'no'],
      [
        { code: 'jetstream_rejected', retryable: false, written: 'no', status: 400, errCode: 10060, message: 'm4' },
        'redis_rejected',
        false,
        'no',
      ],
      [{ code: 'jetstream_unauthorized', retryable: false, written: 'no', message: 'm7' }, 'redis_rejected', false, 'no'],
      [{ code: 'timeout', retryable: true, written: 'unknown', message: 'm5' }, 'timeout', true, 'unknown'],
      [{ code: 'closed', retryable: false, written: 'unknown', message: 'm6' }, 'closed', false, 'unknown'],
    ];
    for (const [error, code, retryable, written] of cases) {
      expect(publishErrorOfJetStream(error)).toEqual({ code, retryable, written, message: error.message });
    }
  });

  it('passes the input refusals through unchanged', () => {
    const error: JetStreamPublishError = { code: 'payload_invalid', retryable: false, field: 'payload.a', message: 'bad' };
    expect(publishErrorOfJetStream(error)).toBe(error);
  });
});
