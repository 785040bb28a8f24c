/**
 * Asked for events the log no longer has: `retention.events_keep` compacted them into the state snapshot. Carries the
 * first id still available, so a reader can resume from there (the API answers 410 Gone with it).
 */
export class EventsCompactedError extends Error {
  constructor(
    readonly requestedId: number,
    readonly firstId: number,
  ) {
    super(
      `event ${requestedId} is gone: events before ${firstId} were compacted (retention.events_keep in platform.json); ` +
        `the first still available is ${firstId}, read from there`,
    );
    this.name = 'EventsCompactedError';
  }
}
