import type { JetStreamClient } from '@nats-io/jetstream';
import { PubHeaders } from '@nats-io/jetstream';

/**
 * Whether message `seq` of JetStream stream `stream` carries `Nats-Msg-Id: msgId`, i.e. an
 * earlier attempt of this very publish stored it. A clustered JetStream checks
 * `Nats-Expected-Last-Subject-Sequence` before its duplicate window, so a retry whose first
 * attempt was stored is refused as "wrong last sequence" rather than answered as a duplicate;
 * this tells the two apart. Rejects when the message cannot be read.
 */
export async function storedWithMsgId(js: JetStreamClient, stream: string, seq: number, msgId: string): Promise<boolean> {
  const jsm = await js.jetstreamManager(false);
  const message = await jsm.streams.getMessage(stream, { seq });
  return message?.header.get(PubHeaders.MsgIdHdr) === msgId;
}
