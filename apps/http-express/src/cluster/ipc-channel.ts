/**
 * One end of the IPC channel between the primary and one worker: requests with correlation ids and
 * a time limit each, their answers, and notices. Every message received is checked against the
 * protocol (protocol.ts) before a handler sees it: a malformed message is reported and dropped,
 * never thrown, so nothing another process sends can end this one.
 */
import type { Guarded } from './guards';
import { isRecord } from './guards';
import type { NoticeProtocol, PayloadOf, RequestProtocol, ResultOf } from './protocol';

/** Marks sqlgate's messages, so that messages of other libraries on the channel are left alone. */
const TAG = 'sqlgate/cluster';

type Envelope =
  | { tag: typeof TAG; kind: 'request'; id: number; type: string; payload: unknown }
  | { tag: typeof TAG; kind: 'response'; id: number; ok: true; result: unknown }
  | { tag: typeof TAG; kind: 'response'; id: number; ok: false; error: string }
  | { tag: typeof TAG; kind: 'notice'; type: string; payload: unknown };

/** Why a request failed: no answer in time, the channel closed, or the other side failed. */
export type IpcFailure = 'timeout' | 'closed' | 'remote' | 'malformed' | 'send';

export class IpcError extends Error {
  constructor(
    readonly failure: IpcFailure,
    message: string,
  ) {
    super(message);
    this.name = 'IpcError';
  }
}

/** Where messages go: `process.send` in a worker, `worker.send` in the primary. */
export type SendMessage = (message: Envelope, done: (error: Error | null) => void) => void;

/** What answers each request type. */
export type RequestHandlers<In extends RequestProtocol> = {
  [K in keyof In]: (payload: PayloadOf<In[K]>) => ResultOf<In[K]> | Promise<ResultOf<In[K]>>;
};

/** What takes each notice type. */
export type NoticeHandlers<In extends NoticeProtocol> = {
  [K in keyof In]: (payload: Guarded<In[K]>) => void;
};

export interface IpcChannelOptions<
  Out extends RequestProtocol,
  In extends RequestProtocol,
  InNotices extends NoticeProtocol,
> {
  send: SendMessage;
  /** Requests this end sends: their answers are checked with these guards. */
  outgoing: Out;
  /** Requests this end answers: their payloads are checked with these guards. */
  incoming: In;
  incomingNotices: InNotices;
  handlers: RequestHandlers<In>;
  noticeHandlers: NoticeHandlers<InNotices>;
  /** Told of each malformed or unexpected message (it was dropped). */
  onMalformed: (reason: string) => void;
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: IpcError): void;
  timer: NodeJS.Timeout;
  guard: (value: unknown) => unknown;
  type: string;
}

export class IpcChannel<
  Out extends RequestProtocol,
  In extends RequestProtocol,
  OutNotices extends NoticeProtocol,
  InNotices extends NoticeProtocol,
> {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closedBecause: string | undefined;

  constructor(private readonly options: IpcChannelOptions<Out, In, InNotices>) {}

  /** Sends a request; settles with its checked answer, or an IpcError after `timeoutMs`. */
  request<K extends keyof Out & string>(
    type: K,
    payload: PayloadOf<Out[K]>,
    timeoutMs: number,
  ): Promise<ResultOf<Out[K]>> {
    if (this.closedBecause !== undefined) {
      return Promise.reject(new IpcError('closed', `${type}: ${this.closedBecause}`));
    }
    const id = this.nextId++;
    return new Promise<ResultOf<Out[K]>>((resolve, reject) => {
      const timer = setTimeout(
        () => this.settle(id, new IpcError('timeout', `${type}: no answer in ${timeoutMs} ms`)),
        timeoutMs,
      );
      // A pending request never keeps a process alive by itself.
      timer.unref();
      this.pending.set(id, {
        resolve: resolve as (result: unknown) => void,
        reject,
        timer,
        guard: this.options.outgoing[type]?.result ?? (() => undefined),
        type,
      });
      this.transmit({ tag: TAG, kind: 'request', id, type, payload }, (error) =>
        this.settle(id, new IpcError('send', `${type}: ${error.message}`)),
      );
    });
  }

  /**
   * Sends a notice; resolves once it is written to the channel (or lost: the channel closed), so
   * that a process about to exit can wait for its last notice.
   */
  notify<K extends keyof OutNotices & string>(
    type: K,
    payload: Guarded<OutNotices[K]>,
  ): Promise<void> {
    if (this.closedBecause !== undefined) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.transmit(
        { tag: TAG, kind: 'notice', type, payload },
        () => resolve(),
        () => resolve(),
      );
    });
  }

  /** Takes one message from the other end; anything not sqlgate's is ignored. */
  receive(message: unknown): void {
    if (!isRecord(message) || message.tag !== TAG || this.closedBecause !== undefined) return;
    try {
      this.dispatch(message);
    } catch (error) {
      // A handler that throws synchronously is answered in `answer`; this is a defect of ours.
      this.options.onMalformed(`message handling failed: ${(error as Error).message}`);
    }
  }

  /** Fails every pending request and refuses new ones: the other end is gone. */
  close(reason: string): void {
    if (this.closedBecause !== undefined) return;
    this.closedBecause = reason;
    for (const id of Array.from(this.pending.keys())) {
      this.settle(id, new IpcError('closed', reason));
    }
  }

  get closed(): boolean {
    return this.closedBecause !== undefined;
  }

  private dispatch(message: Record<string, unknown>): void {
    const { kind, id, type } = message;
    if (kind === 'response' && Number.isSafeInteger(id)) {
      this.takeResponse(id as number, message);
    } else if (kind === 'request' && Number.isSafeInteger(id) && typeof type === 'string') {
      void this.answer(id as number, type, message.payload);
    } else if (kind === 'notice' && typeof type === 'string') {
      this.takeNotice(type, message.payload);
    } else {
      this.options.onMalformed(`malformed message of kind ${String(kind)}`);
    }
  }

  private takeResponse(id: number, message: Record<string, unknown>): void {
    const waiting = this.pending.get(id);
    // Late answers (after a timeout) are expected and dropped.
    if (waiting === undefined) return;
    if (message.ok === true) {
      const result = waiting.guard(message.result);
      if (result === undefined) {
        this.options.onMalformed(`malformed answer to ${waiting.type}`);
        this.settle(id, new IpcError('malformed', `${waiting.type}: malformed answer`));
      } else this.settle(id, undefined, result);
    } else {
      const reason = typeof message.error === 'string' ? message.error : 'failed';
      this.settle(id, new IpcError('remote', `${waiting.type}: ${reason}`));
    }
  }

  private async answer(id: number, type: string, rawPayload: unknown): Promise<void> {
    const reply = (outcome: { ok: true; result: unknown } | { ok: false; error: string }) =>
      this.transmit({ tag: TAG, kind: 'response', id, ...outcome }, () => undefined);
    const spec = Object.hasOwn(this.options.incoming, type)
      ? this.options.incoming[type]
      : undefined;
    const payload = spec?.payload(rawPayload);
    if (spec === undefined || payload === undefined) {
      this.options.onMalformed(`malformed request ${type}`);
      reply({ ok: false, error: `malformed request ${type}` });
      return;
    }
    try {
      const handler = this.options.handlers[type as keyof In] as (value: unknown) => unknown;
      reply({ ok: true, result: await handler(payload) });
    } catch (error) {
      reply({ ok: false, error: (error as Error)?.message ?? String(error) });
    }
  }

  private takeNotice(type: string, rawPayload: unknown): void {
    const guard = Object.hasOwn(this.options.incomingNotices, type)
      ? this.options.incomingNotices[type]
      : undefined;
    const payload = guard?.(rawPayload);
    if (guard === undefined || payload === undefined) {
      this.options.onMalformed(`malformed notice ${type}`);
      return;
    }
    const handler = this.options.noticeHandlers[type as keyof InNotices] as (
      value: unknown,
    ) => void;
    handler(payload);
  }

  private settle(id: number, error: IpcError | undefined, result?: unknown): void {
    const waiting = this.pending.get(id);
    if (waiting === undefined) return;
    this.pending.delete(id);
    clearTimeout(waiting.timer);
    if (error) waiting.reject(error);
    else waiting.resolve(result);
  }

  /** Sends, reporting a failure to `failed` (a closed channel, an unserialisable value). */
  private transmit(
    message: Envelope,
    failed: (error: Error) => void,
    written: () => void = () => undefined,
  ): void {
    try {
      this.options.send(message, (error) => {
        if (error) failed(error);
        else written();
      });
    } catch (error) {
      failed(error as Error);
    }
  }
}
