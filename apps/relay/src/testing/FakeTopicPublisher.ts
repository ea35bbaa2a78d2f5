import type { TopicPublisher } from '../core/Connection.js';

/** What a topic subscriber must accept: one published frame. */
export interface TopicMember {
  receive(frame: string): void;
}

/**
 * uWS pub/sub in memory: a publish reaches every member subscribed to the topic at that moment,
 * synchronously and in subscription order, and is recorded.
 */
export class FakeTopicPublisher implements TopicPublisher {
  private readonly topics = new Map<string, Set<TopicMember>>();
  readonly published: Array<{ topic: string; frame: string }> = [];

  join(topic: string, member: TopicMember): void {
    let members = this.topics.get(topic);
    if (members === undefined) {
      members = new Set();
      this.topics.set(topic, members);
    }
    members.add(member);
  }

  leave(topic: string, member: TopicMember): void {
    const members = this.topics.get(topic);
    if (members === undefined) return;
    members.delete(member);
    if (members.size === 0) this.topics.delete(topic);
  }

  publish(topic: string, frame: string): void {
    this.published.push({ topic, frame });
    for (const member of [...(this.topics.get(topic) ?? [])]) member.receive(frame);
  }

  subscriberCount(topic: string): number {
    return this.topics.get(topic)?.size ?? 0;
  }
}
