/**
 * One MQTT 3.1.1 PUBLISH frame, QoS 0, no retain, no dup: fixed header 0x30, the remaining length
 * as a variable-length integer, the topic as a length-prefixed UTF-8 string, then the payload.
 */
export function encodePublish(topic: string, payload: string): Buffer {
  const topicLength = Buffer.byteLength(topic);
  const payloadLength = Buffer.byteLength(payload);
  if (topicLength > 0xffff) throw new RangeError(`topic is ${topicLength} bytes; MQTT allows 65535`);
  let remaining = 2 + topicLength + payloadLength;
  if (remaining > 268_435_455) throw new RangeError(`PUBLISH of ${remaining} bytes is beyond MQTT's maximum`);
  const lengthBytes: number[] = [];
  do {
    let byte = remaining % 128;
    remaining = Math.floor(remaining / 128);
    if (remaining > 0) byte |= 0x80;
    lengthBytes.push(byte);
  } while (remaining > 0);
  const frame = Buffer.allocUnsafe(1 + lengthBytes.length + 2 + topicLength + payloadLength);
  let at = frame.writeUInt8(0x30, 0);
  for (const byte of lengthBytes) at = frame.writeUInt8(byte, at);
  at = frame.writeUInt16BE(topicLength, at);
  at += frame.write(topic, at, 'utf8');
  frame.write(payload, at, 'utf8');
  return frame;
}
