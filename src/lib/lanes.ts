// Group commit for work that shares a statement (issue 38, bench part m1): the items of one process that are ready
// while earlier ones of their lane are being worked on wait for one of those to end, and then go together. A lane
// holds the items that can share a statement (the caller's key says which). At most `inFlight` batches of a lane run
// at once; an item arriving while fewer run starts its own at once, so an item alone waits for nothing. Used by the
// direct sends' accepting statement (src/domain/messaging/direct-batches.ts) and their read (send-reads.ts).

type Lane<W> = { running: number; waiting: W[] };

/** What an item of a lane waits on: its own result, or the batch's error. */
export type Waiter<R> = { done: (result: R) => void; failed: (error: unknown) => void };

export type LaneOptions<W> = {
  /** Batches of one lane running at once. */
  inFlight: number;
  /** The next batch of the lane's waiting items (at least one when any waits); the rest stay, in their order. */
  take: (waiting: W[]) => { batch: W[]; rest: W[] };
  /** Runs one batch: it must settle each of its items (resolve or reject what they wait on) and never reject itself. */
  run: (batch: W[]) => Promise<void>;
};

export class Lanes<W> {
  private readonly lanes = new Map<string, Lane<W>>();
  private readonly options: LaneOptions<W>;

  constructor(options: LaneOptions<W>) {
    this.options = options;
  }

  /** Adds `item` to the lane `key`; it runs now when the lane has room, else with the next batch. */
  add(key: string, item: W): void {
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, (lane = { running: 0, waiting: [] }));
    lane.waiting.push(item);
    if (lane.running < this.options.inFlight) this.next(key, lane);
  }

  /** Runs the lane's next batch, then the next, until none waits. */
  private next(key: string, lane: Lane<W>): void {
    if (lane.waiting.length === 0) {
      if (lane.running === 0) this.lanes.delete(key);
      return;
    }
    const { batch, rest } = this.options.take(lane.waiting);
    lane.waiting = rest;
    lane.running++;
    void this.options.run(batch).finally(() => {
      lane.running--;
      this.next(key, lane);
    });
  }
}
