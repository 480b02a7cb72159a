/**
 * A request whose answer may stream (docs/decisions.md 10.22). The channel is made only when the
 * request streams: a JSON answer pays nothing for it. The answer is streamed once the channel has
 * started, whole once the request ended without it.
 */
import { StreamedRowBudget } from '../execution/result-budget';
import { statementText } from '../execution/response';
import type { QueryRequest, RequestOrRefusal } from '../request';
import type { QueryStream, StreamOptions } from '../service-types';
import { closingEvents } from '../streaming/closing-events';
import type { CopyOut } from '../streaming/copy-out';
import { EventChannel } from '../streaming/event-channel';
import type { StreamRoute } from '../routing/read-routing';
import type { OpenStream } from './request-mode';
import { runRequest } from './request-run';
import type { ServiceParts } from './service-parts';

export function streamRequest(
  parts: ServiceParts,
  request: RequestOrRefusal<QueryRequest>,
  streamOptions: StreamOptions,
): Promise<QueryStream> {
  return new Promise((resolve, reject) => {
    let channel: EventChannel | undefined;
    let copy: CopyOut | undefined;
    let route: StreamRoute | undefined;
    const openStream: OpenStream = (caller, copyOut, routed) => {
      copy = copyOut;
      route = routed;
      const { sharedResultBudget } = parts.settings;
      const opened = new EventChannel(
        statementText,
        copyOut !== undefined,
        sharedResultBudget && new StreamedRowBudget(sharedResultBudget, caller),
      );
      channel = opened;
      // `started` also settles when the channel closes without an event: then the answer is whole.
      void opened.started.then(() => {
        if (opened.hasStarted)
          resolve({
            streamed: true,
            events: opened,
            ...(copy ? { copy } : {}),
            ...(route ? { route } : {}),
          });
      });
      return opened;
    };
    runRequest(parts, request, streamOptions, { kind: 'streamed', openStream })
      .then((response) => {
        try {
          if (channel?.hasStarted) {
            for (const event of closingEvents(response)) channel.push(event);
          }
        } finally {
          channel?.close();
        }
        if (!channel?.hasStarted) resolve({ streamed: false, response });
      })
      .catch((defect: unknown) => {
        channel?.close();
        // After the stream started, a defect ends it without its `done` event.
        if (!channel?.hasStarted) reject(defect);
      });
  });
}
